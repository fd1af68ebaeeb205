#!/bin/bash
# Records NetPIPE 3.7.2 (a network protocol independent performance evaluator) as Debian ships it
# for Open MPI (`apt-get install netpipe-openmpi`: /usr/bin/NPopenmpi, unchanged), with SST DUMPI
# preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for NetPIPE. Run from the
# repository root:
#
#   tools/record/netpipe.sh OUT_DIR [--otf2] [--rankfile FILE] [--upper BYTES]
#
# NetPIPE runs on 2 ranks only: a ping-pong (MPI_Send / MPI_Recv between ranks 0 and 1) whose
# message size grows step by step from 1 byte to --upper (default 65,536), each power-of-two-ish
# size also perturbed by -3 and +3 bytes (82 sizes up to 65,536). For each size it synchronises
# the two ranks with a short exchange, then times the ping-pong (`-n 20`: 20 round trips per
# trial, fixed, so every recording sends the same messages; NetPIPE repeats the trial and keeps the
# best) and rank 0 prints one line per size on stderr: "N: BYTES bytes 20 times --> Mbps in usec".
# --rankfile FILE binds the two ranks as FILE says (kept as OUT_DIR/rankfile).
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; unpacked files
# removed), netpipe.out (the program's stderr: one line per size), stdout.txt (each rank's host
# name), np.out (NetPIPE's own table: bytes, Mbps, half round trip) and the truth in expected/,
# independently of tracelogic:
#   sizes.tsv       per size (netpipe.out): step, bytes, round trips per trial
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   log-times.tsv, log-calls.tsv  "Now starting the main loop" and each size's line dated on the
#                   trace's clock (iotimes shim, tools/record/iotimes.c, IOTIMES_MATCH=stderr with
#                   IOTIMES_STDOUT_LINES=1: each line is dated when stdio writes its newline, after
#                   that size's measurement), and the MPI calls between them
#                   (tools/record/log-times.py): size k is measured between line k-1 and line k.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: netpipe.sh OUT_DIR [--otf2] [--rankfile FILE] [--upper BYTES]}
shift
opts=(); rankfile=; otf2=no; upper=65536
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) opts+=(--otf2); otf2=yes; shift ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        --upper) upper=$2; shift 2 ;;
        *) echo "netpipe.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
command -v NPopenmpi >/dev/null || { echo "netpipe.sh: NPopenmpi is missing (apt-get install -y netpipe-openmpi)" >&2; exit 1; }
# No --report-bindings: mpirun would print them on stderr, which is NetPIPE's log here.
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile")
rm -rf "$out"
tmp=$(mktemp -d /tmp/netpipe.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
IOTIMES_WRITES=1 IOTIMES_MATCH=stderr IOTIMES_STDOUT_LINES=1 \
    "$root/tools/record/record.sh" "$out" 2 \
    --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH -x IOTIMES_STDOUT_LINES" \
    -- NPopenmpi -u "$upper" -n 20
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stderr.txt netpipe.out
[ -s stdout.txt ] || rm -f stdout.txt
last=$(awk '/bytes .* times -->/ { b = $2 } END { print b }' netpipe.out)
[ "${last:-0}" -ge "$upper" ] || { echo "netpipe.sh: NetPIPE did not reach $upper bytes (netpipe.out)" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    echo "# per size (netpipe.out): step, bytes, round trips per trial"
    awk '/bytes .* times -->/ { sub(/:$/, "", $1); printf "%s\t%s\t%s\n", $1, $2, $4 }' netpipe.out
} > expected/sizes.tsv
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . netpipe.out 'start=Now starting the main loop' 'size=bytes .* times -->'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
