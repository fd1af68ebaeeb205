#!/bin/sh
# Run fuzz targets one after the other with the limits of docs/reliability.md.
# Usage: fuzz/run.sh SECONDS TARGET...   (e.g. fuzz/run.sh 300 read_otf2 read_dumpi)
# Logs go to fuzz/logs/TARGET.log; crashes, hangs and OOMs to fuzz/artifacts/TARGET/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
secs=$1
shift
mkdir -p "$here/logs"
for t in "$@"; do
  mkdir -p "$here/corpus/$t" "$here/artifacts/$t"
  (cd "$here" && RUSTC_BOOTSTRAP=1 cargo fuzz run -s none --codegen-units 16 "$t" "corpus/$t" -- \
    -jobs=1 -workers=1 -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="artifacts/$t/" -print_final_stats=1) >"$here/logs/$t.log" 2>&1
  echo "$t: exit $?; $(grep -E '^#[0-9]+' "$here/logs/$t.log" | tail -1)"
done
