#!/bin/sh
# Build the fuzz targets once, then run them one after the other with the limits of
# docs/reliability.md. The binaries are run directly (what `cargo fuzz run` does after its
# build), so a run is not held up by rebuilding when the sources change meanwhile.
# Usage: fuzz/run.sh SECONDS TARGET...   (e.g. fuzz/run.sh 300 read_otf2 read_dumpi)
#        NO_BUILD=1 fuzz/run.sh ...      (reuse the binaries already built)
#        MAX_LEN=65536 fuzz/run.sh ...    (cap input size: faster runs on big seeds such as LULESH)
# Logs go to fuzz/logs/TARGET/fuzz-0.log; crashes, hangs and OOMs to fuzz/artifacts/TARGET/.
# Exits 1 when any target left a new crash, timeout, leak or out-of-memory file in its artifacts
# folder (libFuzzer's own exit code is 0 in -jobs mode even then), after running every target;
# the targets that found something are listed last.
set -u
here=$(cd "$(dirname "$0")" && pwd)
secs=$1
shift
if [ -z "${NO_BUILD:-}" ]; then
  (cd "$here" && RUSTC_BOOTSTRAP=1 cargo fuzz build -s none --codegen-units 16) || exit 1
fi
bin="$here/target/x86_64-unknown-linux-gnu/release"
mkdir -p "$here/logs"
found=""
for t in "$@"; do
  # libFuzzer with -jobs writes the job's output to fuzz-0.log in its working folder: one
  # folder per target keeps runs of different targets apart.
  work="$here/logs/$t"
  mkdir -p "$here/corpus/$t" "$here/artifacts/$t" "$work"
  before=$(ls "$here/artifacts/$t" | grep -cE '^(crash|timeout|oom|leak)-')
  (cd "$work" && "$bin/$t" "$here/corpus/$t" \
    -jobs=1 -workers=1 -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$here/artifacts/$t/" -print_final_stats=1 ${MAX_LEN:+-max_len=$MAX_LEN}) >"$work/run.log" 2>&1
  rc=$?
  echo "$t: exit $rc; $(grep -E '^#[0-9]+' "$work/fuzz-0.log" | tail -1)"
  after=$(ls "$here/artifacts/$t" | grep -cE '^(crash|timeout|oom|leak)-')
  [ "$after" -eq "$before" ] || found="$found $t"
done
if [ -n "$found" ]; then
  echo "findings (see fuzz/artifacts/TARGET/):$found"
  exit 1
fi
