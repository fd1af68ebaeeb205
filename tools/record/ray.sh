#!/bin/bash
# Records Ray (the parallel de novo genome assembler, Debian's package `ray`, its binary `Ray`,
# unmodified, on Open MPI) assembling a small synthetic genome from paired reads, with SST DUMPI
# preloaded or with tools/otf2-tracer. Ray's RayPlatform runs one loop per rank that polls for
# messages (MPI_Iprobe on any source and tag, then MPI_Recv and MPI_Get_count) and sends every
# message with MPI_Isend, later completed by MPI_Test; the run is a sequence of named steps
# ("Step: K-mer counting", ...) that rank 0 prints as each ends. Nobody tuned tracelogic for it.
# Run from the repository root:
#
#   tools/record/ray.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE]]
#
# RANKS defaults to 4. --rankfile FILE binds the ranks as FILE says (Open MPI rankfile, kept as
# OUT_DIR/rankfile). The input is made here, deterministically (Python's seeded generator, seed
# RAY_SEED, default 7): a random genome of RAY_GENOME bases (default 3000) and RAY_PAIRS pairs
# (default 150) of 100-base reads from 400-base fragments, 0.2 % substitution errors, assembled
# with k = 31 (`Ray -k 31 -p reads_1.fastq reads_2.fastq -o ray-output`). Ray polls all the
# time it waits: about 50,000-100,000 MPI_Iprobe per rank and second on a loaded 2-core machine,
# so the trace grows with the wall time more than with the input (a 10 kb genome with 600 pairs on
# 4 ranks: 110 s, 2.6 M Iprobe and 124 k messages per rank, 616 MB of DUMPI), hence the small
# default input; more processes than cores make it explode (6 and 8 ranks on 2 shared cores: 4-12
# GB of DUMPI in 13 minutes, docs/corpus.md "Ray"). Needs `ray` (apt), DUMPI
# (tools/record/build-dumpi.sh, DUMPI_PREFIX) or the OTF2 tracer (tools/otf2-tracer/build.sh) and
# otf2-print.
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst, zstd -12; the
# unpacked files, several hundred MB, are removed), genome.fa and the reads, ray-output/ (Ray's own output: ElapsedTime.txt with
# the steps' wall-clock dates to the second, Contigs.fasta, NetworkTest.txt, ...), rank0.log
# (rank 0's stdout, from Open MPI's --output-filename) and the truth in expected/, independently
# of tracelogic:
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#                      (expected-counts.sh: dumpi-counts.sh, otf2-counts.sh)
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#                      (per-rank.sh; read by tools/record/check-heldout.py)
#   log-times.tsv, log-calls.tsv  Ray's steps on the trace's clock: the iotimes shim
#                      (tools/record/iotimes.c, IOTIMES_WRITES=1) logs every flush of each rank's
#                      stdout; only rank 0's (its process id is in its log) are kept in iotimes.log
#                      (all ranks' in iotimes-all.log), and tools/record/log-times.py dates each
#                      "Step: NAME" line (the end of that step) and counts the MPI calls between
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tools/record/args.sh"
command -v Ray >/dev/null || { echo "ray.sh: Ray is missing (apt-get install -y ray)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/ray.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
# The input: a seeded random genome and paired reads sampled from it (forward read of the
# fragment's start, reverse complement of its end), with rare substitutions.
RAY_SEED=${RAY_SEED:-7} RAY_GENOME=${RAY_GENOME:-3000} RAY_PAIRS=${RAY_PAIRS:-150} python3 - "$tmp" <<'EOF'
import os, random, sys
d = sys.argv[1]
seed, glen, pairs = int(os.environ["RAY_SEED"]), int(os.environ["RAY_GENOME"]), int(os.environ["RAY_PAIRS"])
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
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$tmp/genome.fa" --input "$tmp/reads_1.fastq" --input "$tmp/reads_2.fastq" \
    --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH --output-filename ranklogs" \
    -- Ray -k 31 -p reads_1.fastq reads_2.fastq -o ray-output
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
cp ranklogs/1/rank.0/stdout rank0.log
rm -rf ranklogs
[ -s stderr.txt ] || rm -f stderr.txt
mkdir -p expected
# Rank 0's writes only: its log says "Rank= 0 Size= N ProcessIdentifier= PID".
pid=$(sed -n 's/.*Rank= 0 Size= [0-9]* ProcessIdentifier= \([0-9]*\).*/\1/p' rank0.log | head -n 1)
[ -n "$pid" ] || { echo "ray.sh: rank 0's process id not in rank0.log" >&2; exit 1; }
mv iotimes.log iotimes-all.log
awk -v P="$pid" '$2 == P' iotimes-all.log > iotimes.log
"$root/tools/record/expected-counts.sh" .
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
fi
"$root/tools/record/log-times.py" . rank0.log 'step=Step: .*'
if [ $otf2 = no ]; then
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '); Ray's steps: $(grep -c '^step' expected/log-times.tsv))"
