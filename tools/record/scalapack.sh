#!/bin/bash
# Records one of ScaLAPACK's own test drivers (ScaLAPACK 2.2.1 as Debian ships it: `apt-get
# install -y scalapack-mpi-test scalapack-test-common libscalapack-openmpi-dev`; the drivers are
# /usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests/x*, run unchanged), on Open MPI, with SST
# DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for ScaLAPACK. Run from the
# repository root:
#
#   tools/record/scalapack.sh OUT_DIR DRIVER [RANKS [--otf2] [--grid PxQ[,PxQ...]] [--rankfile FILE]]
#
# DRIVER is one of (its input file written here, so every recording computes the same thing):
#   lu    xdlu: PDGETRF + PDGETRS (LU with partial pivoting: panel along a process column,
#         pivot swaps along rows, BLACS row/column broadcasts), M = N = 64, 128, 192, NB 8, 1 RHS
#   qr    xdqr: PDGEQRF (QR factorisation only), M = N = 64, 128, 192, MB = NB = 8
#   llt   xdllt: PDPOTRF + PDPOTRS (Cholesky, upper), N = 64, 128, 192, NB 8, 1 RHS
# RANKS defaults to 6. --grid lists the process grids P x Q the driver runs, in order (default:
# one grid, 2x3 on 6 ranks, 2x4 on 8, else 1xRANKS); each grid runs every size, so the driver runs
# (sizes x grids) tests, one after the other. BLACS_GRIDINIT is called with 'Row-major' by every
# one of these drivers (no option): rank = row * Q + col. --rankfile FILE binds ranks by an Open
# MPI rankfile (kept as OUT_DIR/rankfile): the placement changes, not the numbering.
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; the unpacked files
# are removed), DRIVER.dat (the input), scalapack.out (the driver's output: one line per test
# with M, N, NB, P, Q, times and PASSED/FAILED) and the truth in expected/, independently of
# tracelogic:
#   tests.tsv       the driver's tests in order (its result lines: grid, sizes, PASSED/FAILED)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   log-times.tsv, log-calls.tsv  the driver's result lines dated on the trace's clock (iotimes
#                   shim, tools/record/iotimes.c; gfortran writes unit 6 unbuffered with
#                   GFORTRAN_UNBUFFERED_PRECONNECTED=y; only rank 0 prints), and the MPI calls
#                   between them (tools/record/log-times.py): test k runs between result line
#                   k-1 (or the table's header for the first) and result line k.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: scalapack.sh OUT_DIR DRIVER [RANKS [--otf2] [--grid PxQ[,PxQ...]] [--rankfile FILE]]}
driver=${2:?usage: scalapack.sh OUT_DIR DRIVER [RANKS ...]}
ranks=${3:-6}
shift $(( $# < 3 ? $# : 3 ))
opts=(); rankfile=; otf2=no
case $ranks in 6) grids=2x3 ;; 8) grids=2x4 ;; *) grids=1x$ranks ;; esac
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) opts+=(--otf2); otf2=yes; shift ;;
        --grid) grids=$2; shift 2 ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        *) echo "scalapack.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
tests=/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests
[ -x "$tests/xd$driver" ] || { echo "scalapack.sh: $tests/xd$driver is missing (apt-get install -y scalapack-mpi-test scalapack-test-common libscalapack-openmpi-dev)" >&2; exit 1; }
IFS=, read -ra gl <<< "$grids"
ps=; qs=
for g in "${gl[@]}"; do
    p=${g%x*}; q=${g#*x}
    [ $((p * q)) -le "$ranks" ] || { echo "scalapack.sh: grid $g needs more than $ranks ranks" >&2; exit 2; }
    ps="$ps $p"; qs="$qs $q"
done
ng=${#gl[@]}
tmp=$(mktemp -d /tmp/scalapack.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
case $driver in
    lu) dat=LU.dat; cat > "$tmp/$dat" <<EOF
'SCALAPACK, LU factorization input file'
'MPI Machine'
'LU.out'		output file name (if any)
6			device out
3			number of problems sizes
64 128 192		values of M
64 128 192		values of N
1			number of NB's
8			values of NB
1			number of NRHS's
1			values of NRHS
1			Number of NBRHS's
1			values of NBRHS
$ng			number of process grids (ordered pairs of P & Q)
$ps			values of P
$qs			values of Q
1.0			threshold
F			(T or F) Test Cond. Est. and Iter. Ref. Routines
EOF
    ;;
    qr) dat=QR.dat; cat > "$tmp/$dat" <<EOF
'ScaLAPACK, Orthogonal factorizations input file'
'MPI machine'
'QR.out'		output file name (if any)
6			device out
1			number of factorizations
'QR'			factorizations: QR, QL, LQ, RQ, QP, TZ
3			number of problems sizes
64 128 192		values of M
64 128 192		values of N
1			number of blocking sizes
8			values of MB
8			values of NB
$ng			number of process grids (ordered pairs P & Q)
$ps			values of P
$qs			values of Q
5.0			threshold
EOF
    ;;
    llt) dat=LLT.dat; cat > "$tmp/$dat" <<EOF
'ScaLAPACK, LLt factorization input file'
'MPI machine'
'LLT.out'		output file name (if any)
6			device out
'U'			define Lower or Upper
3			number of problems sizes
64 128 192		values of N
1			number of NB's
8			values of NB
1			number of NRHS's
1			values of NRHS
1			number of NBRHS's
1			values of NBRHS
$ng			number of process grids (ordered pairs P & Q)
$ps			values of P
$qs			values of Q
3.0			threshold
F			(T or F) Test Cond. Est. and Iter. Ref. Routines
EOF
    ;;
    *) echo "scalapack.sh: DRIVER is lu, qr or llt" >&2; exit 2 ;;
esac
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
GFORTRAN_UNBUFFERED_PRECONNECTED=y IOTIMES_WRITES=1 IOTIMES_MATCH=stdout \
    "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$tmp/$dat" --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH -x GFORTRAN_UNBUFFERED_PRECONNECTED" \
    -- "$tests/xd$driver"
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt scalapack.out
[ -s stderr.txt ] || rm -f stderr.txt
grep -q 'END OF TESTS' scalapack.out || { echo "scalapack.sh: the driver did not finish (scalapack.out)" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    echo "# the driver's result lines in order (scalapack.out): test, then the line's fields"
    grep -E '^(WALL|CPU) ' scalapack.out | awk '{ printf "%d\t%s\n", NR, $0 }'
    grep -E 'tests completed and passed|tests completed and failed|tests skipped' scalapack.out | sed 's/^ */# /'
} > expected/tests.tsv
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . scalapack.out 'header=^---- ' 'test=^(WALL|CPU) ' 'end=END OF TESTS'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
