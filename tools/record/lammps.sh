#!/bin/sh
# Records the LAMMPS runs of the corpus (tests/data/apps/lammps-*) with SST DUMPI preloaded into
# Debian's `lmp` (package lammps), and for each an untraced twin run that writes LAMMPS's own
# rank -> processor-grid map (`processors ... file procs.map` sends extra messages, so it stays out
# of the traced run). Run from the repository root:
#
#   tools/record/lammps.sh [OUT_ROOT [NAME]]   (default tests/data/apps; NAME: only that run)
#
# README_ONLY=1 rewrites the runs' README.md from their recorded files without recording again.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/tests/data/apps}
only=${2:-}
input=$root/tools/record/inputs/in.melt
inputs=; lmpargs=; pack=
rec=$root/tools/record/record.sh

one() { # name np px py pz map description
    name=$1 np=$2
    [ -z "$only" ] || [ "$only" = "$name" ] || return 0
    dir=$out/$name
    if [ -n "${README_ONLY:-}" ]; then readme "$dir" "$np" "$7"; return 0; fi
    rm -rf "$dir"
    # shellcheck disable=SC2086
    "$rec" "$dir" "$np" --input "$input" $inputs -- \
        lmp $lmpargs -in in.melt -var px "$3" -var py "$4" -var pz "$5" -var pmap "$6" -log log.lammps -screen none
    twin=$(mktemp -d /tmp/lammps-twin.XXXXXX)
    sed 's/^processors\t\(.*\)$/processors\t\1 file procs.map/' "$input" > "$twin/in.melt"
    for f in $inputs; do [ "$f" = --input ] || cp "$f" "$twin"/; done
    # shellcheck disable=SC2086
    (cd "$twin" && mpirun --allow-run-as-root --oversubscribe -np "$np" \
        lmp $lmpargs -in in.melt -var px "$3" -var py "$4" -var pz "$5" -var pmap "$6" -log log.lammps -screen none)
    cp "$twin/procs.map" "$dir/procs.map"
    # The twin must have chosen the same grid as the traced run.
    a=$(grep "MPI processor grid" "$dir/log.lammps"); b=$(grep "MPI processor grid" "$twin/log.lammps")
    [ "$a" = "$b" ] || { echo "lammps.sh: twin run chose another grid ($b, traced: $a)" >&2; exit 1; }
    rm -rf "$twin"
    mkdir -p "$dir/expected"
    "$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
    (cd "$dir" && tar cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
    for f in stdout.txt stderr.txt; do [ -s "$dir/$f" ] || rm -f "$dir/$f"; done
    readme "$dir" "$np" "$7"
}

readme() { # dir np description
    grid=$(grep "MPI processor grid" "$1/log.lammps" | sed 's/^ *//')
    tl='- Trace: `dumpi-*.meta` and one `dumpi-*-NNNN.bin` per rank (plain DUMPI).'
    [ -f "$1/dumpi.tar.zst" ] && tl='- Trace: `dumpi.tar.zst` (the DUMPI `.meta` and one `.bin` per rank, packed; tracelogic reads the archive).'
    rl='- Rank order: none given (LAMMPS computes in MPI_COMM_WORLD order).'
    [ -f "$1/reorder.txt" ] && rl=$(sed -n '1s/^# I J: /- Rank order: `reorder.txt` (LAMMPS `-reorder custom`): /p' "$1/reorder.txt")

    cat > "$1/README.md" <<README
# $(basename "$1"): LAMMPS Lennard-Jones melt, $2 ranks, $3

Recorded by \`tools/record/lammps.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$1/versions.txt")
($(sed -n 's/^host: //p' "$1/versions.txt"), time-shared: durations are real but not representative).

- Program: Debian's \`lmp\` ($(sed -n 's/^package: lammps //p' "$1/versions.txt")), unmodified, SST DUMPI 13.0.0
  preloaded (\`LD_PRELOAD\`), Open MPI $(sed -n 's/^mpirun: mpirun (Open MPI) //p' "$1/versions.txt").
- Command: \`$(cat "$1/command.txt")\`
- Input: \`in.melt\`, the LAMMPS example \`examples/melt/in.melt\` (LAMMPS, GPL-2.0) shortened to
  $(sed -n 's/^Loop time of .* for \([0-9]*\) steps.*/\1/p' "$1/log.lammps") steps, neighbour lists checked every step, processor grid and rank map from command-line
  variables. The trace files are our own data.
$rl
$tl

## Ground truth
- Processor grid, from LAMMPS's log (\`log.lammps\`): \`$grid\`. LAMMPS exchanges ghost atoms with
  the 6 face neighbours of each sub-domain (periodic box: a torus; a dimension of 2 gives the same
  neighbour both ways, a dimension of 1 none), 6 swaps forward (positions) and 6 reverse (forces) per step, plus the border exchanges when neighbour lists are rebuilt.
- Rank -> grid map: \`procs.map\`, written by LAMMPS itself (\`processors ... file procs.map\`) in an
  untraced twin run with the same ranks and settings (that keyword sends extra messages). Columns:
  rank in LAMMPS's world, in its universe, original rank (MPI_COMM_WORLD: the rank of the trace's
  files), then the 1-based grid indices I J K.
- Call counts: \`expected/dumpi2ascii-counts.txt\`, counted from the tracer's own \`dumpi2ascii\` by
  \`tools/record/dumpi-counts.sh\` (calls per MPI function, point-to-point sends and bytes).
README
}

one lammps-melt-8 8 '*' '*' '*' cart 'default grid and rank map (map cart)'
one lammps-melt-12 12 '*' '*' '*' cart 'default grid and rank map (map cart)'
one lammps-melt-12-xzy 12 '*' '*' '*' xzy 'default grid, rank map xzy (x fastest, then z, then y: not MPI_Cart order)'
one lammps-melt-12-1x3x4 12 1 3 4 cart 'forced grid 1x3x4 (map cart)'
# Three stages with different communication (minimisation, MD, MD with a wider ghost cutoff), each
# dated on DUMPI's clock by the iotimes shim flushing log.lammps: ground truth for phases.
# The rank -> grid map of the phases run: an untraced twin with `processors * * * file procs.map`
# (the default grid and rank order, written out).
phases_twin() {
    twin=$(mktemp -d /tmp/lammps-twin.XXXXXX)
    sed 's/^lattice/processors\t* * * file procs.map\nlattice/' "$root/tools/record/inputs/in.melt-phases" > "$twin/in.melt-phases"
    (cd "$twin" && mpirun --allow-run-as-root --oversubscribe -np 8 lmp -in in.melt-phases -log log.lammps -screen none)
    a=$(grep "MPI processor grid" "$1/log.lammps"); b=$(grep "MPI processor grid" "$twin/log.lammps")
    [ "$a" = "$b" ] || { echo "lammps.sh: twin run chose another grid ($b, traced: $a)" >&2; exit 1; }
    cp "$twin/procs.map" "$1/procs.map"
    rm -rf "$twin"
}

phases_run() {
    name=lammps-melt-phases-8
    [ -z "$only" ] || [ "$only" = "$name" ] || return 0
    dir=$out/$name
    if [ -z "${README_ONLY:-}" ]; then
        rm -rf "$dir"
        shim=$(mktemp -d /tmp/iotimes.XXXXXX)
        gcc -shared -fPIC -O2 -o "$shim/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
        IOTIMES_MATCH=log.lammps "$rec" "$dir" 8 --input "$root/tools/record/inputs/in.melt-phases" \
            --preload "$shim/libiotimes.so" -- lmp -in in.melt-phases -log log.lammps -screen none
        rm -rf "$shim"
        mkdir -p "$dir/expected"
        "$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
        "$root/tools/record/lammps-phases.py" "$dir"
        for f in stdout.txt stderr.txt; do [ -s "$dir/$f" ] || rm -f "$dir/$f"; done
        phases_twin "$dir"
    fi
    cat > "$dir/README.md" <<README
# $name: LAMMPS Lennard-Jones melt, 8 ranks, three stages (minimize, run, run with a wider ghost cutoff)

Recorded by \`tools/record/lammps.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$dir/versions.txt")
($(sed -n 's/^host: //p' "$dir/versions.txt"), time-shared: durations are real but not representative).

- Program: Debian's \`lmp\` ($(sed -n 's/^package: lammps //p' "$dir/versions.txt")), unmodified, SST DUMPI 13.0.0 and the
  iotimes shim (\`tools/record/iotimes.c\`, here dating every flush of log.lammps) preloaded, Open MPI
  $(sed -n 's/^mpirun: mpirun (Open MPI) //p' "$dir/versions.txt").
- Command: \`$(cat "$dir/command.txt")\` (with IOTIMES_MATCH=log.lammps)
- Input: \`in.melt-phases\`, built on the LAMMPS example \`examples/melt/in.melt\` (LAMMPS, GPL-2.0):
  atoms displaced at random, then \`minimize\` (20 iterations), \`run 20\`, \`comm_modify cutoff 10.0\`
  and \`run 20\`. Thermo output every 5 steps, flushed. The trace files are our own data.
- Trace: \`dumpi.tar.zst\` (the DUMPI \`.meta\` and one \`.bin\` per rank, packed with \`zstd -19\`; tracelogic reads the archive).

## Ground truth
- Processor grid (\`log.lammps\`): \`$(grep "MPI processor grid" "$dir/log.lammps" | sed 's/^ *//')\`, default rank order; \`procs.map\`
  from an untraced twin run with \`processors * * * file procs.map\` (columns as in lammps-melt-8).
- Stages: \`expected/stages.tsv\` (tools/record/lammps-phases.py): each stage's first and last step and
  its begin (its step-0 thermo line is out, after the stage's setup) and end ("Loop time of" is out) in
  seconds since the trace's first event. Between stages: the next stage's setup (ghost borders,
  neighbour lists), and before the first the input's setup (broadcasts of the input, MPI_Cart_create,
  atom creation); after the last, the timing statistics (MPI_Allreduce / MPI_Reduce).
- What differs between stages: the minimisation adds MPI_Allreduce of energies and search directions
  every iteration; the last run's ghost cutoff 10.0 exceeds half a sub-domain (16.8 / 2 = 8.4), so
  ghosts come from two processors away: more and larger messages per step than in the second stage.
- Call counts: \`expected/dumpi2ascii-counts.txt\` (tools/record/dumpi-counts.sh).
README
}
phases_run

# Ranks permuted before LAMMPS lays out its grid: `-reorder custom reorder.txt` makes MPI_COMM_WORLD
# rank I rank J = (5I + 7) mod 12 of the communicator LAMMPS computes in (MPI_Comm_split), so the
# grid in world ranks is scattered (not any Cartesian order).
reorder() { # n: MPI_COMM_WORLD rank I becomes rank (5I + 7) mod n of LAMMPS's world (5 and n coprime)
    awk -v n="$1" 'BEGIN { print "# I J: MPI_COMM_WORLD rank I is rank J of LAMMPS'"'"'s world (J = (5I + 7) mod " n ")"; for (i = 0; i < n; i++) print i, (5 * i + 7) % n }' > /tmp/reorder.txt
}
reorder 12
inputs="--input /tmp/reorder.txt" lmpargs="-reorder custom reorder.txt" \
    one lammps-melt-12-reorder 12 '*' '*' '*' cart 'default grid, ranks permuted by -reorder custom (not a Cartesian order of world ranks)'
# 27 ranks: a 3x3x3 torus, where every rank has 6 distinct neighbours (no dimension of 2 or 1);
# 30 steps and packed, as 27 rank files are large.
inputs= lmpargs="-var nsteps 30" pack=1 one lammps-melt-27 27 '*' '*' '*' cart 'default grid and rank map (map cart)'
reorder 27
inputs="--input /tmp/reorder.txt" lmpargs="-reorder custom reorder.txt -var nsteps 30" pack=1 \
    one lammps-melt-27-reorder 27 '*' '*' '*' cart 'default grid, ranks permuted by -reorder custom (not a Cartesian order of world ranks)'
