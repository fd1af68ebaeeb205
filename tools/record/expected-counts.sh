#!/bin/sh
# The decoders' counts of a run just recorded, independently of tracelogic: in RUN (a recording
# script's output folder), an OTF2 trace at RUN/trace/traces.otf2 is counted with otf2-print,
# else the DUMPI files in RUN with dumpi2ascii. Writes RUN/expected/{otf2-print,dumpi2ascii}-counts.txt
# (otf2-counts.sh, dumpi-counts.sh) and RUN/expected/*-per-rank.txt (per-rank.sh).
#
#   tools/record/expected-counts.sh RUN
set -eu
here=$(cd "$(dirname "$0")" && pwd)
run=$1
mkdir -p "$run/expected"
if [ -e "$run/trace/traces.otf2" ]; then
    "$here/otf2-counts.sh" "$run/trace/traces.otf2" > "$run/expected/otf2-print-counts.txt"
    "$here/per-rank.sh" "$run/trace/traces.otf2" > "$run/expected/otf2-print-per-rank.txt"
else
    "$here/dumpi-counts.sh" "$run" > "$run/expected/dumpi2ascii-counts.txt"
    "$here/per-rank.sh" "$run" > "$run/expected/dumpi2ascii-per-rank.txt"
fi
