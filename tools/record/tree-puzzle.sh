#!/bin/sh
# Records TREE-PUZZLE (quartet-puzzling maximum-likelihood phylogeny of H. A. Schmidt, K. Strimmer,
# M. Vingron and A. von Haeseler; Debian's `tree-ppuzzle`, the MPI build, on Open MPI) as held-out
# runs, kept OUTSIDE the repository and never used to tune anything (docs/corpus.md, "Held-out
# check"), with SST DUMPI and the iotimes shim preloaded. Nothing is downloaded: the alignment is
# IQ-TREE's example (/usr/share/doc/iqtree/examples/example.phy: 17 vertebrate taxa, 1998 DNA
# columns). `apt-get install -y --no-install-recommends tree-ppuzzle iqtree`. From the repository
# root:
#
#   tools/record/tree-puzzle.sh [OUT_ROOT]        (default /work/heldout/runs-apps8)
#
# Runs (1-5 s each on 2 shared cores; DUMPI traces under 1 MB): tree-puzzle-4 and -8, the menu
# answered `n 20000 w y` (20,000 puzzling steps, gamma rate heterogeneity, start).
# TREE-PUZZLE is a master-worker program (rank 0 the master): the parameter estimation sends
# work and gathers results with MPI_Send/MPI_Probe/MPI_Recv and MPI_Bcast/MPI_Scatterv/
# MPI_Gatherv; the quartet ML step and the puzzling step send results to the master with
# MPI_Ssend. Its stdout names the steps ("Optimizing missing substitution process parameters",
# "Writing pairwise distances", "Computing quartet maximum likelihood trees", "Computing quartet
# puzzling trees", "Computing maximum likelihood branch lengths", "All results written to
# disk"); the shim dates every stdout line on the trace's clock (expected/log-times.tsv,
# expected/log-calls.tsv by tools/record/log-times.py: the truth for phases).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/work/heldout/runs-apps8}
command -v tree-ppuzzle >/dev/null || { echo "tree-puzzle.sh: tree-ppuzzle missing (apt-get install -y tree-ppuzzle)" >&2; exit 1; }
ex=/usr/share/doc/iqtree/examples/example.phy
[ -f "$ex" ] || { echo "tree-puzzle.sh: $ex missing (apt-get install -y iqtree)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/tree-puzzle-rec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
cp "$ex" "$tmp/infile"
for np in 4 8; do
    dir=$out/tree-puzzle-$np
    [ -e "$dir" ] && { echo "tree-puzzle.sh: $dir exists, skipped"; continue; }
    printf 'n\n20000\nw\ny\n' | IOTIMES_MATCH=stdout IOTIMES_WRITES=1 IOTIMES_STDOUT_LINES=1 \
        "$root/tools/record/record.sh" "$dir" "$np" --input "$tmp/infile" --preload "$tmp/libiotimes.so" \
        --mpirun-opt "-x IOTIMES_MATCH" --mpirun-opt "-x IOTIMES_WRITES" --mpirun-opt "-x IOTIMES_STDOUT_LINES" \
        -- tree-ppuzzle infile
    dpkg-query -W -f='package: ${Package} ${Version}\n' tree-ppuzzle >> "$dir/versions.txt"
    grep -q "All results written to disk" "$dir/stdout.txt" || { echo "tree-puzzle.sh: $dir did not finish" >&2; exit 1; }
    "$root/tools/record/expected-counts.sh" "$dir"
    "$root/tools/record/rank0-iotimes.sh" "$dir"
    python3 "$root/tools/record/log-times.py" "$dir" "$dir/stdout.txt" \
        parameters="^Optimizing missing substitution" distances="^Writing pairwise distances" \
        quartets="^Computing quartet maximum likelihood" puzzling="^Computing quartet puzzling" \
        lengths="^Computing maximum likelihood branch" done="^All results written"
done
