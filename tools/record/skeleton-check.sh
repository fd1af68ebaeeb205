#!/bin/sh
# Builds the C skeleton tracelogic generates for a corpus run, runs it at the run's rank count with
# SST DUMPI preloaded, and compares the skeleton's trace with the original (the baseline of
# tests/data/apps/EXPECTED.md, "skeleton"). Prints one line per run.
#
#   tools/record/skeleton-check.sh RUN...      (names under tests/data/apps; needs mpicc, /opt/dumpi)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TRACELOGIC:-$root/target/release/tracelogic}
work=$(mktemp -d /tmp/skeleton-check.XXXXXX)
summary() { "$bin" summary "$1" --json 2>/dev/null | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["p2p_messages"], "messages,", v["p2p_bytes"], "bytes")' 2>/dev/null || echo "unreadable"; }
for run in "$@"; do
    d=$root/tests/data/apps/$run
    t=$d; [ -f "$d/dumpi.tar.zst" ] && t=$d/dumpi.tar.zst
    n=$(grep -c '^rank_calls' "$d/expected/dumpi2ascii-counts.txt")
    "$bin" skeleton "$t" -o "$work/$run.c" > /dev/null 2>&1 || { echo "$run: skeleton failed"; continue; }
    mpicc -O2 -o "$work/$run" "$work/$run.c" 2> "$work/$run.cc.log" || { echo "$run: does not compile ($work/$run.cc.log)"; continue; }
    if ! timeout 600 "$root/tools/record/record.sh" "$work/rec-$run" "$n" -- "$work/$run" > /dev/null 2>&1; then
        echo "$run: the skeleton fails at $n ranks: $(grep -m1 -o 'MPI_ERR_[A-Z_]*[^*]*' "$work/rec-$run/stderr.txt" 2>/dev/null || echo 'see stderr')"
        continue
    fi
    cmp=$("$bin" compare "$t" "$work/rec-$run" --json 2>/dev/null | python3 -c 'import json,sys; v=json.load(sys.stdin); print("theta %.3f, eps %.3f, similar %s" % (v["theta"], v["epsilon"], v["similar"]))' 2>/dev/null || echo "compare failed")
    warn=$("$bin" summary "$work/rec-$run" 2>&1 >/dev/null | head -1)
    echo "$run: original $(summary "$t"); skeleton $(summary "$work/rec-$run"); $cmp${warn:+; $warn}"
done
rm -rf "$work"
