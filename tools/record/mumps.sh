#!/bin/bash
# Records MUMPS 5.5.1 (MUltifrontal Massively Parallel sparse direct Solver) as Debian ships it:
# its example driver `dsimpletest` (`apt-get install mumps-test`: /usr/lib/mumps/dsimpletest,
# unchanged binary, Open MPI 4.1.4), with SST DUMPI preloaded or with tools/otf2-tracer. Nobody
# tuned tracelogic for MUMPS. Run from the repository root:
#
#   tools/record/mumps.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--side N]]
#
# dsimpletest reads a centralised assembled matrix (N, NNZ, the NNZ entries "i j value", then the
# N right-hand side values) from rank 0's stdin and calls DMUMPS once with JOB = 6: analysis
# (rank 0 orders the graph with AMF and maps the elimination tree's subtrees onto the ranks),
# factorization (each rank factors the fronts of its subtrees and sends contribution blocks up
# the tree to the rank that owns the parent front), solve (forward and backward substitution
# over the same tree, the solution gathered on rank 0). Only rank 0 prints, and it prints each
# step's banner ("****** ANALYSIS STEP", "FACTORIZATION STEP", "SOLVE & CHECK STEP") and the
# step's statistics. The input written here (deterministic): the 7-point Laplacian of an
# N x N x N grid (N = --side, default 20: 8,000 unknowns, 53,600 entries; diagonal 6, neighbours
# -1) with the right-hand side A * (1, ..., 1), so the solution printed is all ones. RANKS
# defaults to 4. --rankfile FILE binds the ranks as FILE says (kept as OUT_DIR/rankfile).
#
# The driver is Fortran: Open MPI's Fortran bindings call PMPI_* directly, so DUMPI's Fortran
# wrappers are preloaded too (record.sh --fortran). They need build-dumpi.sh's MPI_Pack fix
# (1 Dec 2026): an older DUMPI build aborts MUMPS at its first packed message (MPI_ERR_TRUNCATE in
# stderr.txt); DUMPI_PREFIX names the build. The OTF2 tracer needs its Fortran MPI_Iprobe (same
# date) to record MUMPS's probes.
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; unpacked files
# removed), matrix.in (the input), mumps.out (the driver's output) and the truth in expected/,
# independently of tracelogic:
#   mumps-log.txt   the steps' banners and statistics (tree nodes, front sizes, operations,
#                   elapsed times per step) and the solution's range (min and max component)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   log-times.tsv, log-calls.tsv  the three steps' banners and "Leaving" lines and the final
#                   "Entering DMUMPS ... JOB = -2" dated on the trace's clock (iotimes shim,
#                   tools/record/iotimes.c; gfortran writes unit 6 unbuffered with
#                   GFORTRAN_UNBUFFERED_PRECONNECTED=y), and the MPI calls between them
#                   (tools/record/log-times.py)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: mumps.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--side N]]}
ranks=${2:-4}
shift $(( $# < 2 ? $# : 2 ))
opts=(); rankfile=; otf2=no; side=20
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) opts+=(--otf2); otf2=yes; shift ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        --side) side=$2; shift 2 ;;
        *) echo "mumps.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
driver=/usr/lib/mumps/dsimpletest
[ -x "$driver" ] || { echo "mumps.sh: $driver is missing (apt-get install -y mumps-test)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/mumps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
python3 - "$side" > "$tmp/matrix.in" <<'EOF'
import sys
n = int(sys.argv[1])
ix = lambda i, j, k: (i * n + j) * n + k + 1
entries = []
for i in range(n):
    for j in range(n):
        for k in range(n):
            r = ix(i, j, k)
            entries.append((r, r, 6.0))
            for a, b, c in ((i + 1, j, k), (i - 1, j, k), (i, j + 1, k), (i, j - 1, k), (i, j, k + 1), (i, j, k - 1)):
                if 0 <= a < n and 0 <= b < n and 0 <= c < n:
                    entries.append((r, ix(a, b, c), -1.0))
rhs = [0.0] * n ** 3
for r, _, v in entries:
    rhs[r - 1] += v
print(n ** 3)
print(len(entries))
for r, c, v in entries:
    print(r, c, v)
for v in rhs:
    print(v)
EOF
GFORTRAN_UNBUFFERED_PRECONNECTED=y IOTIMES_WRITES=1 IOTIMES_MATCH=stdout \
    "$root/tools/record/record.sh" "$out" "$ranks" --fortran \
    --input "$tmp/matrix.in" --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH -x GFORTRAN_UNBUFFERED_PRECONNECTED" \
    -- "$driver" < "$tmp/matrix.in"
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt mumps.out
[ -s stderr.txt ] || rm -f stderr.txt
grep -q 'SOLVE & CHECK STEP' mumps.out && grep -q 'Solution is' mumps.out \
    || { echo "mumps.sh: the driver did not finish (mumps.out)" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    grep -E 'Entering DMUMPS|executing #MPI|STEP \*|Number of nodes in the tree|Maximum frontal size|level 2 nodes|Operations|Elapsed time|Time (in|to)|WARNING' mumps.out
    sed -n 's/^ *Solution is//p' mumps.out | tr -s ' ' '\n' | grep -v '^$' | sort -g \
        | sed -n '1s/^/solution min /p;$s/^/solution max /p'
} > expected/mumps-log.txt
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . mumps.out 'analysis=ANALYSIS STEP' 'analysis-end=Leaving analysis' \
    'factorization=FACTORIZATION STEP' 'factorization-end=Leaving factorization' \
    'solve=SOLVE & CHECK STEP' 'solve-end=Leaving solve' 'end=JOB = +-2'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
