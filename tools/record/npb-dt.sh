#!/bin/sh
# Builds NAS Parallel Benchmarks 3.4 MPI DT (Data Traffic, C) at classes S and W from a local copy
# of its source and records its graphs with SST DUMPI preloaded. DT sends data along a fixed
# graph, node i on rank i (dt.c: `dg->node[i]->address = i`): BH (black hole) gathers the sources
# through comparators of fan-in 4 into one sink, WH (white hole) scatters one source the other way,
# SH (shuffle) is a butterfly of comparators between sources and sinks. Run from the repository root:
#
#   tools/record/npb-dt.sh NPB3.4-MPI_SOURCE [OUT_ROOT]     (default tests/data/apps)
#
# Records npb-dt.W.BH.11 (8 sources, 2 comparators, the sink: a tree of fan-out 2 then 4) and
# npb-dt.S.SH.12 (4 sources, 4 comparators, 4 sinks: a 2-dimensional butterfly).
set -eu
src=${1:?usage: npb-dt.sh NPB3.4-MPI_SOURCE [OUT_ROOT]}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$root/tests/data/apps}
[ -f "$src/DT/dt.c" ] || { echo "npb-dt.sh: $src is not an NPB3.4-MPI source folder" >&2; exit 2; }
build=$(mktemp -d /tmp/npb-dt-build.XXXXXX)
cp -a "$src"/. "$build"/
cd "$build"
cp config/make.def.template config/make.def
mkdir -p bin
{ make dt CLASS=S && make dt CLASS=W; } > build.log 2>&1 || { tail -20 build.log >&2; exit 1; }

one() { # class graph np truth
    name=npb-dt.$1.$2.$3
    dir=$out/$name
    rm -rf "$dir"
    "$root/tools/record/record.sh" "$dir" "$3" -- "$build/bin/dt.$1.x" "$2"
    grep -q "Verification    =               SUCCESSFUL" "$dir/stdout.txt" || { echo "npb-dt.sh: $name did not verify" >&2; exit 1; }
    mv "$dir/stdout.txt" "$dir/npb-output.txt"
    [ -s "$dir/stderr.txt" ] || rm -f "$dir/stderr.txt"
    mkdir -p "$dir/expected"
    "$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
    "$root/tools/record/per-rank.sh" "$dir" > "$dir/expected/dumpi2ascii-per-rank.txt"
    (cd "$dir" && tar cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
    cat > "$dir/README.md" <<README
# $name: NPB DT class $1, graph $2, $3 ranks (SST DUMPI)

Recorded by \`tools/record/npb-dt.sh\` (docs/corpus.md) on $(sed -n 's/^date: //p' "$dir/versions.txt").

- Program: NAS Parallel Benchmarks 3.4 MPI (NASA, public source; mirror mbdevpl/nas-parallel-benchmarks,
  folder NPB3.4-MPI), DT class $1, built with Debian's mpicc (make.def as shipped), SST DUMPI 13.0.0 preloaded.
- Command: \`$(cat "$dir/command.txt")\`
- Log: \`npb-output.txt\` (the benchmark's output: class, graph, processes, verification).
- Trace: \`dumpi.tar.zst\`. Our own data.
- Counts: \`expected/dumpi2ascii-counts.txt\`, \`expected/dumpi2ascii-per-rank.txt\` (dumpi2ascii).

## Ground truth (DT/dt.c; node i runs on rank i)
$4
- Every sink sends its checksum (one double) to rank 0, which verifies.
README
}

one W BH 11 '- buildBH, class W: 8 sources (ranks 0-7); comparator 8 + i reads sources 4i .. 4i+3 (maxInDeg 4);
  the sink, rank 10, reads comparators 8 and 9. A tree of 11 nodes: the root 10, fan-out 2, then 4.
  Each arc carries the stream length (an int) and the features (doubles).'
one S SH 12 '- buildSH, class S: 4 sources (ranks 0-3), one layer of 4 comparators (ranks 4-7): comparator 4 + i
  reads sources (i AND NOT 1) and (i AND NOT 1) + 1; 4 sinks (ranks 8-11): sink 8 + i reads comparators
  4 + (i AND NOT 2) and 4 + (i AND NOT 2) + 2. A 2-dimensional butterfly of 12 nodes.'
rm -rf "$build"
