#!/bin/sh
# Records the corpus run lammps-rigid-8: Debian's LAMMPS example `rigid` (nine rigid bodies of
# 81 atoms, `fix rigid`) on 8 ranks with SST DUMPI preloaded into the unmodified `lmp`, its
# `run 10000` shortened to 200 steps (the only edit), then an untraced twin run that writes
# LAMMPS's own rank -> grid map (`processors * * * file procs.map` sends extra messages, so it
# stays out of the trace), the tracer's own counts, and the trace packed with zstd -19.
# Whether a swap of the ghost-atom exchange sends at all, and how much, depends on where the
# bodies are: every rank's sequence of sends differs.
#
#   tools/record/lammps-rigid.sh OUT_DIR
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-rigid.sh OUT_DIR}
ex=/usr/share/lammps/examples/rigid
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '$1 == "run" && $2 ~ /^[0-9]+$/ { $2 = int($2 / 50) } { print }' "$ex/in.rigid" > "$tmp/in.rigid"
rm -rf "$out"
"$root/tools/record/record.sh" "$out" 8 --input "$tmp/in.rigid" --input "$ex/data.rigid" -- \
    timeout 600 lmp -in in.rigid -log log.lammps -screen none
mkdir -p "$tmp/twin"
sed 's/^read_data/processors\t* * * file procs.map\nread_data/' "$tmp/in.rigid" > "$tmp/twin/in.rigid"
cp "$ex/data.rigid" "$tmp/twin/"
(cd "$tmp/twin" && mpirun --allow-run-as-root --oversubscribe -np 8 lmp -in in.rigid -log log.lammps -screen none > /dev/null)
cp "$tmp/twin/procs.map" "$out/procs.map"
(cd "$out" && tar -cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin stdout.txt stderr.txt)
mkdir -p "$out/expected"
"$root/tools/record/dumpi-counts.sh" "$out/dumpi.tar.zst" > "$out/expected/dumpi2ascii-counts.txt"
grep -h "processor grid\|Loop time" "$out/log.lammps"
