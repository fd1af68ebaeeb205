#!/bin/bash
# Records PT-Scotch 7.0.3 (parallel graph ordering) as Debian ships it: `dgord`, its distributed
# nested-dissection orderer (`apt-get install ptscotch scotch`: /usr/bin/dgord, unchanged,
# Open MPI 4.1.4), with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for
# PT-Scotch. Run from the repository root:
#
#   tools/record/scotch.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--side N] [--threads T]]
#
# The input written here (deterministic): the graph of an N x N x N grid (N = --side, default 32:
# 32,768 vertices, 7-point stencil), made by scotch's `gmk_m3` as a centralised graph file.
# dgord -Cd (deterministic, fixed random seed) -vst: rank 0 reads the file and the graph is
# scattered over all ranks; the default strategy orders it by parallel nested dissection: the
# distributed graph is coarsened by parallel matching (all ranks exchange vertex data with the
# ranks owning their neighbours), a separator is computed on a coarse graph and refined, then the
# two halves are "folded" onto the two halves of the ranks (fold=d: each half duplicated) and
# ordered recursively, down to one rank, where sequential Scotch finishes (dvert=1000 vertices);
# the ordering is gathered on rank 0. Irregular: all-to-all exchanges of varying sizes and
# sub-communicators halving the ranks. Only rank 0 prints: the strategy ("S Strat=..."), then
# after the ordering the times ("T Order", "T I/O", "T Total": min, max, average over ranks).
# RANKS defaults to 4. --rankfile FILE binds the ranks as FILE says (kept as OUT_DIR/rankfile).
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; unpacked files
# removed), grid.grf (the input), dgord.out (the program's output), grid.ord (the ordering),
# grid.tree (the separator tree, dgord -t: per vertex, its tree node) and the truth in expected/,
# independently of tracelogic:
#   ordering.txt    dgord's times, a check that grid.ord is a permutation of 0..N^3-1, and
#                   sequential Scotch's statistics of it (`gotst`: elimination-tree leaves and
#                   height, NNZ and operation count of the factor)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   log-times.tsv, log-calls.tsv  the strategy line and the "T Order" line dated on the trace's
#                   clock (iotimes shim, tools/record/iotimes.c, IOTIMES_STDOUT_LINES=1), and the
#                   MPI calls between them (tools/record/log-times.py): the ordering runs between.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: scotch.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--side N] [--threads T]]}
ranks=${2:-4}
shift $(( $# < 2 ? $# : 2 ))
opts=(); rankfile=; otf2=no; side=32; threads=1
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) opts+=(--otf2); otf2=yes; shift ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        --side) side=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        *) echo "scotch.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
for p in dgord gmk_m3 gotst; do
    command -v $p >/dev/null || { echo "scotch.sh: $p is missing (apt-get install -y ptscotch scotch)" >&2; exit 1; }
done
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/scotch.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
gmk_m3 "$side" "$side" "$side" "$tmp/grid.grf"
SCOTCH_PTHREAD_NUMBER=$threads IOTIMES_WRITES=1 IOTIMES_MATCH=stdout IOTIMES_STDOUT_LINES=1 \
    "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$tmp/grid.grf" --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x SCOTCH_PTHREAD_NUMBER -x IOTIMES_WRITES -x IOTIMES_MATCH -x IOTIMES_STDOUT_LINES" \
    -- dgord -Cd -vst -tgrid.tree grid.grf grid.ord
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt dgord.out
[ -s stderr.txt ] || rm -f stderr.txt
grep -q '^T	Total' dgord.out || { echo "scotch.sh: dgord did not finish (dgord.out)" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    echo "# dgord's times (dgord.out), the ordering's check and gotst's statistics of grid.ord"
    grep '^T	' dgord.out
    n=$((side * side * side))
    if tail -n +2 grid.ord | cut -f2 | sort -n | awk -v n="$n" '$1 != NR - 1 { bad = 1 } END { exit (bad || NR != n) }'; then
        echo "permutation	yes	$n vertices"
    else
        echo "permutation	NO"
    fi
    gotst grid.grf grid.ord
} > expected/ordering.txt
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . dgord.out 'strategy=^S	Strat' 'order=^T	Order' 'total=^T	Total'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
