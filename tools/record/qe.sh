#!/bin/sh
# Records the Quantum ESPRESSO runs of the corpus (tests/data/apps/qe-si-*) with SST DUMPI
# preloaded into Debian's `pw.x` (package quantum-espresso), plus the iotimes shim logging every
# write of pw.x's output (IOTIMES_WRITES=1, IOTIMES_MATCH=stdout), so each "iteration #" line of
# the SCF gets a time on the trace's axis (tools/record/log-times.py). Run from the repository root:
#
#   tools/record/qe.sh [OUT_ROOT]        (default tests/data/apps)
#
# pw.x is Fortran: DUMPI's Fortran bindings are preloaded (--fortran), built with the fixes of
# tools/record/build-dumpi.sh (MPI_IN_PLACE, Waitany indices, status arrays); without them pw.x
# stops in init_ortho_group. DUMPI_PREFIX names that build (default /opt/dumpi).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/tests/data/apps}
prefix=${DUMPI_PREFIX:-/opt/dumpi}
shim=$(mktemp -d /tmp/iotimes.XXXXXX)
gcc -shared -fPIC -O2 -o "$shim/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
pseudo=/usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz

one() { # name np
    name=$1 np=$2
    dir=$out/$name
    rm -rf "$dir"
    tmp=$(mktemp -d /tmp/qe.XXXXXX)
    zcat "$pseudo" > "$tmp/Si.pz-vbc.UPF"
    IOTIMES_WRITES=1 IOTIMES_MATCH=stdout "$root/tools/record/record.sh" "$dir" "$np" \
        --input "$root/tools/record/inputs/si.scf.in" --input "$tmp/Si.pz-vbc.UPF" --fortran \
        --preload "$shim/libiotimes.so" \
        --mpirun-opt "-x OMP_NUM_THREADS=1 -x IOTIMES_WRITES -x IOTIMES_MATCH" -- pw.x -in si.scf.in
    rm -rf "$tmp" "$dir/tmp" "$dir/Si.pz-vbc.UPF"
    mv "$dir/stdout.txt" "$dir/pw.out"
    mkdir -p "$dir/expected"
    DUMPI2ASCII=$prefix/bin/dumpi2ascii "$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
    DUMPI2ASCII=$prefix/bin/dumpi2ascii "$root/tools/record/log-times.py" "$dir" pw.out \
        'start=Current dimensions of program PWSCF' \
        'iteration=iteration # *[0-9]+' \
        'converged=convergence has been achieved in +[0-9]+ iterations' \
        'forces=Forces acting on atoms' \
        'stress=Computing stress' \
        'end=PWSCF +:.*WALL'
    (cd "$dir" && tar cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
    for f in stderr.txt; do [ -s "$dir/$f" ] || rm -f "$dir/$f"; done
    readme "$dir" "$np"
}

readme() { # dir np
    iters=$(sed -n 's/^ *convergence has been achieved in *\([0-9]*\) iterations.*/\1/p' "$1/pw.out")
    diag=$(sed -n 's/^ *scalapack distributed-memory algorithm (size of sub-group: *\(.*\) procs)/\1/p' "$1/pw.out" | tr -d ' ')
    cat > "$1/README.md" <<README
# $(basename "$1"): Quantum ESPRESSO pw.x, silicon SCF, $2 ranks

Recorded by \`tools/record/qe.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$1/versions.txt")
($(sed -n 's/^host: //p' "$1/versions.txt"), time-shared: durations are real but not representative).

- Program: Debian's \`pw.x\` ($(sed -n 's/^package: quantum-espresso //p' "$1/versions.txt")), unmodified, SST DUMPI 13.0.0 with the
  Fortran bindings fixed by tools/record/build-dumpi.sh, and the iotimes shim, preloaded; Open MPI
  $(sed -n 's/^mpirun: mpirun (Open MPI) //p' "$1/versions.txt").
- Command: \`$(cat "$1/command.txt")\`
- Input: \`si.scf.in\` (our own: bulk Si, 2 atoms, LDA, ecutwfc 12 Ry, 2x2x2 shifted k-points = 2
  k-points, mixing 0.3, conv_thr 1e-9) and Si.pz-vbc.UPF from Debian's quantum-espresso-data
  examples (not kept here). Output: \`pw.out\` (pw.x's standard output).
- Parallelisation (pw.out): R & G space division over all $2 ranks (one pool), subspace
  diagonalisation by ScaLAPACK on a $diag process grid (the "ortho group").
- Trace: \`dumpi.tar.zst\` (the DUMPI \`.meta\` and one \`.bin\` per rank, packed). Our own data.

## Ground truth
- SCF iterations: **$iters** ("convergence has been achieved in $iters iterations", pw.out). Each
  iteration runs a Davidson diagonalisation per k-point whose inner step count varies (the
  per-iteration call counts in \`expected/log-calls.tsv\` differ), so iterations are alike in
  kind, not identical call for call.
- Stages dated on the trace clock (\`expected/log-times.tsv\`, tools/record/log-times.py from
  iotimes.log, every write of pw.x's output): start of the set-up, each "iteration #", the
  convergence line, forces and stress, the final timing line. Set-up runs from the trace start to
  "iteration #  1"; the SCF from there to the convergence line; forces, stress and the output after.
- Calls between those lines: \`expected/log-calls.tsv\` (dumpi2ascii).
- Call counts: \`expected/dumpi2ascii-counts.txt\` (tools/record/dumpi-counts.sh, before packing).
README
}

one qe-si-4 4
one qe-si-8 8
rm -rf "$shim"
