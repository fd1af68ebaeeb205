#!/bin/sh
# Builds NAS Parallel Benchmarks 3.4 MPI (LU, SP, CG, class S) from a local copy of its source and
# records them at 16 ranks with SST DUMPI (C and Fortran bindings) preloaded; LU also with a
# permuted core placement from an Open MPI rankfile. Run from the repository root:
#
#   tools/record/npb.sh NPB3.4-MPI_SOURCE [OUT_ROOT]     (default tests/data/apps)
#
# README_ONLY=1 rewrites the runs' README.md from their recorded files without building or recording.
#
# Needs gfortran and DUMPI built with its Fortran bindings (tools/record/build-dumpi.sh does so
# when gfortran is installed): Open MPI's Fortran interface calls PMPI_* directly, so a Fortran
# program's calls reach only DUMPI's Fortran wrappers (libdumpif77.so).
set -eu
src=${1:?usage: npb.sh NPB3.4-MPI_SOURCE [OUT_ROOT]}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$root/tests/data/apps}
[ -f "$src/LU/proc_grid.f" ] || { echo "npb.sh: $src is not an NPB3.4-MPI source folder" >&2; exit 2; }
build=$(mktemp -d /tmp/npb-build.XXXXXX)
[ -n "${README_ONLY:-}" ] || {
cp -a "$src"/. "$build"/
cd "$build"
sed -e 's/^FFLAGS\t= -O3/FFLAGS\t= -O2 -fallow-argument-mismatch/' -e 's/^RAND   = randi8/RAND   = randdp/' \
    config/make.def.template > config/make.def
printf 'lu\tS\t16\nsp\tS\t16\ncg\tS\t16\n' > config/suite.def
mkdir -p bin
make suite > build.log 2>&1 || { tail -20 build.log >&2; exit 1; }
}

one() { # name np binary [mpirun options, one word]
    name=$1 np=$2 exe=$3
    dir=$out/$name
    [ -z "${README_ONLY:-}" ] || return 0
    rm -rf "$dir"
    if [ -n "${4:-}" ]; then
        "$root/tools/record/record.sh" "$dir" "$np" --fortran --mpirun-opt "$4" -- "$build/bin/$exe"
    else
        "$root/tools/record/record.sh" "$dir" "$np" --fortran -- "$build/bin/$exe"
    fi
    grep -q "Verification    =               SUCCESSFUL" "$dir/stdout.txt" || { echo "npb.sh: $name did not verify" >&2; exit 1; }
    mv "$dir/stdout.txt" "$dir/npb-output.txt"
    [ -s "$dir/stderr.txt" ] || rm -f "$dir/stderr.txt"
    mkdir -p "$dir/expected"
    "$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
    (cd "$dir" && tar cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
}

readme() { # dir title ground-truth-text
    cat > "$1/README.md" <<README
# $(basename "$1"): $2

Recorded by \`tools/record/npb.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$1/versions.txt")
($(sed -n 's/^host: //p' "$1/versions.txt"), time-shared: durations are real but not representative).

- Program: NAS Parallel Benchmarks 3.4 MPI (NASA, public source; mirror mbdevpl/nas-parallel-benchmarks,
  folder NPB3.4-MPI), class S, built with Debian's gfortran and Open MPI
  $(sed -n 's/^mpirun: mpirun (Open MPI) //p' "$1/versions.txt") (\`-O2 -fallow-argument-mismatch\`, RAND=randdp), SST DUMPI 13.0.0
  preloaded with its Fortran bindings (\`libdumpif77.so\`).
- Command: \`$(cat "$1/command.txt")\`
- Log: \`npb-output.txt\` (the benchmark's own output: size, iterations, processes, verification).
- Trace: \`dumpi.tar.zst\` (the DUMPI \`.meta\` and one \`.bin\` per rank, packed; tracelogic reads the
  archive). Our own data.

## Ground truth
$3
- Call counts: \`expected/dumpi2ascii-counts.txt\` (tools/record/dumpi-counts.sh, before packing).
README
}

lu_truth='- Process grid, from the source (LU/proc_grid.f, LU/neighbors.f): 16 ranks -> xdim = ydim = 4; rank
  id is at row = id mod 4, column = id div 4; neighbours north/south = id -+ 1 (same column),
  west/east = id -+ 4, no wrap-around: a 4x4 grid (not a torus). All point-to-point traffic
  (exchange_1 pipelines, exchange_3/4/5/6 faces) goes to these neighbours.'
one npb-lu.S.16 16 lu.S.x
readme "$out/npb-lu.S.16" "NPB LU class S, 16 ranks" "$lu_truth"
one npb-sp.S.16 16 sp.S.x
readme "$out/npb-sp.S.16" "NPB SP class S, 16 ranks (multi-partition, 4 cells per rank)" \
'- Communication partners, from the source (SP/make_set.f): p = sqrt(16) = 4, rank n has i = n mod 4,
  j = n div 4; successor/predecessor in direction 1: (i+-1 mod 4, j), direction 2: (i, j+-1 mod 4),
  direction 3: (i-+1, j+-1) mod 4, rank = i + 4j. copy_faces and the x/y/z line solves send only to
  these 6 partners: a 4x4 torus with one diagonal (a 6-neighbour lattice on a torus).'
one npb-cg.S.16 16 cg.S.x
readme "$out/npb-cg.S.16" "NPB CG class S, 16 ranks" \
'- Communication partners, from the source (CG/cg.f, setup_submatrix_info): 4x4 process grid,
  proc_row = n div 4, proc_col = n mod 4; the row reductions exchange with proc_col XOR 2 and then
  proc_col XOR 1 in the same row (reduce_exch_proc), and the transpose step with
  exch_proc = (n mod 4)*4 + n div 4 (itself on the diagonal).'

# Permuted placement: rank r bound to core ((r/2 + r) mod 2), not Open MPI's default round robin.
host=$(hostname)
r=0
: > /tmp/npb-rankfile
while [ $r -lt 16 ]; do echo "rank $r=$host slot=$(( (r / 2 + r) % 2 ))" >> /tmp/npb-rankfile; r=$((r + 1)); done
one npb-lu.S.16-rankfile 16 lu.S.x "--rankfile /tmp/npb-rankfile --report-bindings"
[ -n "${README_ONLY:-}" ] || cp /tmp/npb-rankfile "$out/npb-lu.S.16-rankfile/rankfile"
readme "$out/npb-lu.S.16-rankfile" "NPB LU class S, 16 ranks, permuted core placement (Open MPI rankfile)" \
"$lu_truth
- Placement: \`rankfile\` binds rank r to core ((r div 2 + r) mod 2) instead of Open MPI's default
  (\`stderr.txt\`: --report-bindings). On one host this moves ranks between cores only: the
  communication in rank space is that of npb-lu.S.16 (the same grid, the same messages)."
rm -rf "$build"
