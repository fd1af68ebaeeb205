#!/bin/sh
# Build the seed corpora of every fuzz target (fuzz/corpus/<target>/seed-*) from the real
# samples in tests/data/samples and from small generated traces.
# Usage: fuzz/seed.sh [SAMPLES_DIR]   (run from anywhere; needs cargo)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
samples=${1:-$root/tests/data/samples}
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT

(cd "$root" && cargo build -q -p tracelogic)
(cd "$here" && cargo build -q --example pack)
tl="$root/target/debug/tracelogic"
pack="$here/target/debug/examples/pack"

# Small generated traces: every exchange style, collectives, noise, random numbering.
"$tl" generate --topology ring:3 --iterations 2 --collective allreduce:1 --format text --out "$gen/ring3.txt" >/dev/null
"$tl" generate --topology grid:2x2 --iterations 2 --style sendrecv --numbering random --seed 3 --collective bcast:2:64 --format text --out "$gen/grid.txt" >/dev/null
"$tl" generate --topology star:4 --iterations 1 --style blocking --noise 0.5:10% --format text --out "$gen/star.txt" >/dev/null
"$tl" generate --topology grid:2x3 --iterations 1 --style wavefront --format text --out "$gen/wave.txt" >/dev/null
"$tl" generate --topology ring:3 --iterations 2 --collective barrier:1 --format dumpi --out "$gen/dumpi-ring3" >/dev/null
"$tl" generate --topology grid:2x2 --iterations 1 --style sendrecv --format dumpi --out "$gen/dumpi-grid" >/dev/null
"$tl" generate --topology ring:3 --iterations 2 --collective allreduce:1 --format otf2 --out "$gen/otf2-ring3" >/dev/null
"$tl" generate --topology star:3 --iterations 1 --style blocking --format otf2 --out "$gen/otf2-star" >/dev/null
(cd "$gen" && tar czf otf2-ring3.tar.gz otf2-ring3 && tar cf dumpi-ring3.tar dumpi-ring3 && gzip -k ring3.txt \
  && tar cf - dumpi-grid | zstd -q -o dumpi-grid.tar.zst && zstd -q -k grid.txt)
python3 - "$gen" <<'PY'
import sys, zipfile, os
g = sys.argv[1]
with zipfile.ZipFile(os.path.join(g, "dumpi-grid.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(os.listdir(os.path.join(g, "dumpi-grid"))):
        z.write(os.path.join(g, "dumpi-grid", f), "dumpi-grid/" + f)
PY

c="$here/corpus"
mkdir -p "$c/read_otf2" "$c/read_dumpi" "$c/read_paraver" "$c/read_csv" "$c/read_text" "$c/read_trace" "$c/analyses" "$c/replay" "$c/later_analyses"
for s in pipit-ping-pong-otf2 pipit-ping-pong-otf2-papi pyotf2-generated-4rank; do "$pack" "$c/read_otf2/seed-$s" "$samples/$s"; done
for s in otf2-ring3 otf2-star; do "$pack" "$c/read_otf2/seed-$s" "$gen/$s"; done
for s in sstmacro-dumpi-testtrace sstmacro-dumpi-testbgp; do "$pack" "$c/read_dumpi/seed-$s" "$samples/$s"; done
for s in dumpi-ring3 dumpi-grid; do "$pack" "$c/read_dumpi/seed-$s" "$gen/$s"; done
for s in profet-paraver-test1 profet-paraver-lulesh; do "$pack" "$c/read_paraver/seed-$s" "$samples/$s"; done
cp "$samples/pipit-csv/foo-bar.csv" "$c/read_csv/seed-foo-bar.csv"
cp "$samples/pipit-csv/ping-pong-csv.csv" "$c/read_csv/seed-ping-pong-csv.csv"
for s in ring3 grid star wave; do cp "$gen/$s.txt" "$c/read_text/seed-$s.txt"; done
# The generic entry point: one pack per format, plus archives (tar.gz, tar, gzip, zip, tar.zst, zst).
"$pack" "$c/read_trace/seed-otf2" "$samples/pyotf2-generated-4rank"
"$pack" "$c/read_trace/seed-dumpi" "$samples/sstmacro-dumpi-testtrace"
"$pack" "$c/read_trace/seed-paraver" "$samples/profet-paraver-test1"
"$pack" "$c/read_trace/seed-csv" "$samples/pipit-csv/foo-bar.csv"
"$pack" "$c/read_trace/seed-text" "$gen/ring3.txt"
for a in otf2-ring3.tar.gz dumpi-ring3.tar ring3.txt.gz dumpi-grid.zip dumpi-grid.tar.zst grid.txt.zst; do "$pack" "$c/read_trace/seed-$a" "$gen/$a"; done
# Analyses, later analyses and replay: traces of every format, the generated ones carrying known topologies.
for t in analyses replay later_analyses; do
  for s in ring3 grid star wave; do "$pack" "$c/$t/seed-$s" "$gen/$s.txt"; done
  "$pack" "$c/$t/seed-otf2" "$samples/pyotf2-generated-4rank"
  "$pack" "$c/$t/seed-dumpi" "$samples/sstmacro-dumpi-testtrace"
  "$pack" "$c/$t/seed-paraver" "$samples/profet-paraver-test1"
  "$pack" "$c/$t/seed-csv" "$samples/pipit-csv/ping-pong-csv.csv"
done
echo "seed corpora written to $c"
