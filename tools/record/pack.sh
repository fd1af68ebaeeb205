#!/bin/sh
# Packs the trace of one recorded run folder in place, as every held-out run is kept:
# an OTF2 run's trace/ folder becomes trace.tar.zst, a DUMPI run's dumpi-*.meta and dumpi-*.bin
# become dumpi.tar.zst (tracelogic reads both archives directly).
#
#   tools/record/pack.sh RUN_DIR
set -eu
if [ $# -ne 1 ] || [ ! -d "$1" ]; then echo "usage: pack.sh RUN_DIR" >&2; exit 2; fi
cd "$1"
if [ -d trace ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst
    rm -rf trace
else
    set -- dumpi-*.meta dumpi-*.bin
    [ -e "$1" ] || { echo "pack.sh: no trace (trace/ or dumpi-*.bin) in $(pwd)" >&2; exit 2; }
    tar -cf - "$@" | zstd -12 -q -T2 -o dumpi.tar.zst
    rm -f "$@"
fi
