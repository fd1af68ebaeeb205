#!/bin/bash
# Records ABySS's parallel assembler ABYSS-P (Debian's package `abyss` 2.3.5, unmodified, on Open
# MPI), the one MPI step of `abyss-pe np=N k=25 name=test in='reads_1.fastq reads_2.fastq'`,
# assembling a small synthetic genome, with SST DUMPI preloaded or with tools/otf2-tracer. ABYSS-P
# spreads the k-mers over the ranks by hash and exchanges them (and the adjacency, erosion and
# trimming requests) by point-to-point messages: each rank sends with MPI_Send and keeps one
# MPI_Irecv (any source, any tag) posted, which it polls with MPI_Request_get_status, completes
# with MPI_Test and sizes with MPI_Get_count before posting the next one; the last Irecv is
# cancelled (MPI_Cancel). Stages are separated by MPI_Barrier/MPI_Allreduce; rank 0 prints each
# stage's heading ("Finding adjacent k-mer...", "Eroding tips...", ..., "Assembling...") and every
# rank its counts ("2: Eroded 25 tips."). Nobody tuned tracelogic for it. Run from the
# repository root:
#
#   tools/record/abyss.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE]]
#
# RANKS defaults to 4. --rankfile FILE binds the ranks as FILE says (Open MPI rankfile, kept as
# OUT_DIR/rankfile). The input is made here, deterministically (Python's seeded generator, seed
# ABYSS_SEED, default 7): a random genome of ABYSS_GENOME bases (default 5000) and ABYSS_PAIRS
# pairs (default 250) of 100-base reads from 400-base fragments, 0.2 % substitution errors. The
# command is the one abyss-pe prints for its MPI step (`ABYSS-P -k25 -q3
# --coverage-hist=coverage.hist -s test-bubbles.fa -o test-1.fa reads_1.fastq reads_2.fastq`);
# the later, serial steps of abyss-pe are not run. Like Ray, ABYSS-P polls while it waits, so
# the trace grows with the wall time: 4 ranks on a loaded 2-core host take about 10 s and 16 MB
# of DUMPI (Debian's own test reads, 20,000 pairs of a yeast chromosome, load 938,113 k-mer and
# would make GBs). Needs `abyss` (apt), DUMPI (tools/record/build-dumpi.sh, DUMPI_PREFIX) or the
# OTF2 tracer (tools/otf2-tracer/build.sh) and otf2-print.
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst, zstd -12; the
# unpacked files are removed), genome.fa and the reads, test-1.fa (the contigs), abyss.out (all
# ranks' stdout as Open MPI merged it), rank0.log (rank 0's stdout alone, --output-filename) and
# the truth in expected/, independently of tracelogic:
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   abyss-log.txt   the stage headings and each rank's counts per stage, from abyss.out
#   log-times.tsv, log-calls.tsv  rank 0's stage headings on the trace's clock (iotimes shim,
#                   tools/record/iotimes.c with IOTIMES_STDOUT_LINES=1: ABYSS-P makes stdout
#                   line-buffered and never flushes, so the shim dates each line stdio writes;
#                   iotimes.log keeps rank 0's writes: the process whose bytes
#                   written equal rank0.log's size) and the MPI calls between them
#                   (tools/record/log-times.py). A heading is dated when it is written, i.e. at
#                   the start of its stage.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tools/record/args.sh"
abyssp=/usr/lib/abyss/ABYSS-P
[ -x $abyssp ] || { echo "abyss.sh: $abyssp is missing (apt-get install -y abyss)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/abyss.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
# The input: a seeded random genome and paired reads sampled from it (forward read of the
# fragment's start, reverse complement of its end), with rare substitutions (as ray.sh).
ABYSS_SEED=${ABYSS_SEED:-7} ABYSS_GENOME=${ABYSS_GENOME:-5000} ABYSS_PAIRS=${ABYSS_PAIRS:-250} python3 - "$tmp" <<'EOF'
import os, random, sys
d = sys.argv[1]
seed, glen, pairs = int(os.environ["ABYSS_SEED"]), int(os.environ["ABYSS_GENOME"]), int(os.environ["ABYSS_PAIRS"])
rlen, frag = 100, 400
rng = random.Random(seed)
genome = "".join(rng.choice("ACGT") for _ in range(glen))
comp = str.maketrans("ACGT", "TGCA")
def noisy(s):
    return "".join(rng.choice("ACGT".replace(c, "")) if rng.random() < 0.002 else c for c in s)
with open(os.path.join(d, "genome.fa"), "w") as f:
    f.write(f">synthetic seed={seed} length={glen}\n{genome}\n")
with open(os.path.join(d, "reads_1.fastq"), "w") as a, open(os.path.join(d, "reads_2.fastq"), "w") as b:
    for i in range(pairs):
        p = rng.randrange(0, glen - frag)
        piece = genome[p:p + frag]
        a.write(f"@p{i}/1\n{noisy(piece[:rlen])}\n+\n{'I' * rlen}\n")
        b.write(f"@p{i}/2\n{noisy(piece[::-1].translate(comp)[:rlen])}\n+\n{'I' * rlen}\n")
EOF
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout IOTIMES_STDOUT_LINES=1 "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$tmp/genome.fa" --input "$tmp/reads_1.fastq" --input "$tmp/reads_2.fastq" \
    --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH -x IOTIMES_STDOUT_LINES --output-filename ranklogs" \
    -- $abyssp -k25 -q3 --coverage-hist=coverage.hist -s test-bubbles.fa -o test-1.fa \
    reads_1.fastq reads_2.fastq
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
cp ranklogs/1/rank.0/stdout rank0.log
rm -rf ranklogs
mv stdout.txt abyss.out
[ -s stderr.txt ] || rm -f stderr.txt
grep -q '^Done\.' rank0.log || { echo "abyss.sh: ABYSS-P did not finish (no Done. in rank0.log)" >&2; exit 1; }
mkdir -p expected
# Rank 0's writes only: the process whose last logged offset is rank0.log's size.
mv iotimes.log iotimes-all.log
size=$(stat -c %s rank0.log)
pid=$(awk -v S="$size" '$3 == S { print $2 }' iotimes-all.log | sort -u | head -n 1)
[ -n "$pid" ] || { echo "abyss.sh: no process wrote $size bytes (rank0.log)" >&2; exit 1; }
awk -v P="$pid" '$2 == P' iotimes-all.log > iotimes.log
grep -E '^([0-9]+: )?[A-Z][a-z]+' abyss.out | grep -v 'Running on host' > expected/abyss-log.txt
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . rank0.log 'loaded=^Loaded [0-9]+ k-mer' \
    'stage=^(Finding adjacent|Eroding tips|Pruning tips|Marking ambiguous|Removing low-coverage|Splitting ambiguous|Popping bubbles|Assembling)' \
    'done=^Done\.'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '); stages dated: $(grep -c . expected/log-times.tsv))"
