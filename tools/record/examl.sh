#!/bin/sh
# Records ExaML 3.0.22 (Debian's `examl`: MPI-parallel maximum-likelihood phylogenetics, the
# rapid hill-climbing tree search of RAxML with the alignment's sites spread over the ranks) on
# Open MPI with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for it.
# Run from the repository root (needs `apt-get install -y examl raxml`):
#
#   tools/record/examl.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE]]
#
# Input: a DNA alignment simulated here with a fixed seed (EXAML_TAXA taxa, default 20, x
# EXAML_SITES sites, default 1000; a random binary tree grown by splitting lineages, every new
# lineage mutating each site with probability 0.06), written as PHYLIP aln.phy, turned into
# ExaML's binary format by `parse-examl -s aln.phy -m DNA -n aln` (aln.binary) and given a
# starting tree by `raxmlHPC -y -p 12345 -m GTRCAT -s aln.phy -n pars` (randomized stepwise
# addition parsimony, RAxML_parsimonyTree.pars). The run is then
#   examl-avx2 -t RAxML_parsimonyTree.pars -m GAMMA -s aln.binary -n T1 $EXAML_ARGS
# (the SIMD build is called directly: Debian's /usr/bin/examl is a wrapper that runs mpirun
# itself). EXAML_ARGS (default empty) adds search options, e.g. "-f o" (the old, slower
# hill-climbing without the heuristic cut-off: a longer search).
#
# What ExaML does in MPI (source: github.com/stamatak/ExaML, examl/*.c): MPI_Init, Comm_rank,
# Comm_size, one MPI_Barrier; every rank reads its share of the alignment patterns from the
# binary file itself (no message); MPI_Allreduce of the per-partition weights; then every
# likelihood evaluation (evaluateGeneric) and every Newton-Raphson branch-length step (makenewz)
# ends in one MPI_Allreduce over MPI_COMM_WORLD (when built with _USE_ALLREDUCE, otherwise
# MPI_Reduce + MPI_Bcast), rank 0 broadcasts the RF-distance in the -D convergence check, and
# PSR runs scatter/gather per-site rates (MPI_Scatterv/Gatherv). No point-to-point call at all.
# The search: initial model optimisation (modOpt, then the first line of ExaML_log.T1), the
# rearrangement-radius determination, modOpt again, fast SPR cycles, slow SPR cycles, final
# model optimisation, MPI_Barrier + MPI_Finalize. Rank 0 appends "seconds-since-start lnL" to
# ExaML_log.T1 (opened and closed for each line) after every improvement and every SPR cycle.
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst), the inputs
# (aln.phy, aln.binary, RAxML_parsimonyTree.pars, RAxML_info.*), ExaML's own files
# (ExaML_info.T1, ExaML_log.T1, ExaML_result.T1, ExaML_modelFile.T1; its binary checkpoints are
# removed), examl.out (stdout) and the truth in expected/, independently of tracelogic:
#   dumpi2ascii-counts.txt / otf2-print-counts.txt   calls per function (expected-counts.sh)
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt
#   log-times.tsv, log-calls.tsv   every line of ExaML_log.T1 dated on the trace's clock (iotimes
#       shim, tools/record/iotimes.c, IOTIMES_MATCH=ExaML_log.T1: each fclose of the log by rank 0
#       is stamped with CLOCK_MONOTONIC) and the MPI calls between consecutive lines
#       (tools/record/log-times.py).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: examl.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE]]}
ranks=${2:-4}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
otf2=no; rankfile=
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) otf2=yes; shift ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        *) echo "examl.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
taxa=${EXAML_TAXA:-20}
sites=${EXAML_SITES:-1000}
extra=${EXAML_ARGS:-}
bin=/usr/lib/examl/bin/examl-sse3
grep -qw avx2 /proc/cpuinfo && [ -x /usr/lib/examl/bin/examl-avx2 ] && bin=/usr/lib/examl/bin/examl-avx2
[ -x "$bin" ] || { echo "examl.sh: $bin missing (apt-get install -y examl raxml)" >&2; exit 1; }
command -v raxmlHPC > /dev/null || { echo "examl.sh: raxmlHPC missing (apt-get install -y raxml)" >&2; exit 1; }
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    echo "examl.sh: $out exists and is not empty (remove it first)" >&2; exit 2
fi
tmp=$(mktemp -d /tmp/examl.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
python3 - "$taxa" "$sites" 7 > "$tmp/aln.phy" <<'EOF'
import random, sys
ntax, nsite, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
seqs = [[rng.choice("ACGT") for _ in range(nsite)]]
while len(seqs) < ntax:
    parent = seqs.pop(rng.randrange(len(seqs)))
    for _ in range(2):
        child = parent[:]
        for s in range(nsite):
            if rng.random() < 0.06:
                child[s] = rng.choice("ACGT")
        seqs.append(child)
print(ntax, nsite)
for k, s in enumerate(seqs):
    print("T%02d %s" % (k + 1, "".join(s)))
EOF
(cd "$tmp" && parse-examl -s aln.phy -m DNA -n aln > parse-examl.out 2>&1 \
    && raxmlHPC -y -p 12345 -m GTRCAT -s aln.phy -n pars > raxml.out 2>&1)
set -- --input "$tmp/aln.phy" --input "$tmp/aln.binary" --input "$tmp/RAxML_parsimonyTree.pars" \
    --input "$tmp/RAxML_info.pars" --input "$tmp/RAxML_info.aln" \
    --preload "$tmp/libiotimes.so" --mpirun-opt "-x IOTIMES_MATCH"
[ $otf2 = yes ] && set -- "$@" --otf2
# Bound by a rankfile, two ranks share each core of a 2-core machine and Open MPI does not see it
# as oversubscribed: its busy polling then starves the peer on the same core at each of ExaML's
# ~110,000 collectives (97 s for the first 0.4 s of the search); yield when idle, as it does
# itself in an oversubscribed run without a rankfile.
[ -n "$rankfile" ] && set -- "$@" --mpirun-opt "--rankfile $rankfile --report-bindings --mca mpi_yield_when_idle 1"
# shellcheck disable=SC2086
IOTIMES_MATCH=ExaML_log.T1 "$root/tools/record/record.sh" "$out" "$ranks" "$@" \
    -- "$bin" -t RAxML_parsimonyTree.pars -m GAMMA -s aln.binary -n T1 $extra
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt examl.out
[ -s stderr.txt ] || rm -f stderr.txt
rm -f ExaML_binaryCheckpoint.T1_*
grep -q 'Likelihood of best tree' ExaML_info.T1 || { echo "examl.sh: no final likelihood in ExaML_info.T1" >&2; exit 1; }
dpkg-query -W -f='package: ${Package} ${Version}\n' examl raxml >> versions.txt 2>/dev/null || true
echo "input: $taxa taxa x $sites sites (seed 7), EXAML_ARGS='$extra', binary $bin" >> versions.txt
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . ExaML_log.T1 'lnl=^[0-9.]+ -[0-9.]+$'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
