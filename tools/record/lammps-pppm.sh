#!/bin/sh
# Records LAMMPS with long-range electrostatics (PPPM: 3d FFTs, remaps between bricks and pencils
# on sub-communicators, completed by MPI_Waitany) on 8 ranks with SST DUMPI preloaded into
# Debian's `lmp` (package lammps): minimisation, an NVE run of NVE steps, a Langevin run of
# LANGEVIN steps (tools/record/inputs/in.pppm). Run from the repository root:
#
#   tools/record/lammps-pppm.sh [OUT_DIR [NVE LANGEVIN [--otf2]]]
#
# Default: tests/data/apps/lammps-pppm-8 with 20 and 10 steps (the corpus run). Other step
# counts check that the compressed logical trace does not grow with the steps (docs/logical.md).
# README_ONLY=1 rewrites the README from the recorded files.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/tests/data/apps/lammps-pppm-8}
nve=${2:-20}
langevin=${3:-10}
fmt=${4:-}
input=$root/tools/record/inputs/in.pppm

readme() {
    grid=$(grep "processor grid" "$dir/log.lammps" | head -n 1 | sed 's/^ *//')
    loops=$(grep "^Loop time" "$dir/log.lammps" | sed 's/^/  - /')
    cat > "$dir/README.md" <<README
# $(basename "$dir"): LAMMPS charged Lennard-Jones fluid with PPPM, 8 ranks

Recorded by \`tools/record/lammps-pppm.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$dir/versions.txt")
($(sed -n 's/^host: //p' "$dir/versions.txt"), time-shared: durations are real but not representative).

- Program: Debian's \`lmp\` ($(sed -n 's/^package: lammps //p' "$dir/versions.txt")), unmodified, SST DUMPI 13.0.0
  preloaded (\`LD_PRELOAD\`), Open MPI $(sed -n 's/^mpirun: mpirun (Open MPI) //p' "$dir/versions.txt").
- Command: \`$(cat "$dir/command.txt")\`
- Input: \`in.pppm\` (ours, written for tracelogic; LAMMPS commands only): an fcc lattice of 2,048
  charged Lennard-Jones atoms, \`kspace_style pppm 1.0e-4\`, three stages: minimisation (at most 40
  iterations), an NVE run of $nve steps, a Langevin run of $langevin steps.
- Trace: \`dumpi.tar.zst\` (the DUMPI \`.meta\` and one \`.bin\` per rank, packed; tracelogic reads the archive).
  The trace files are our own data.

## Ground truth
- Processor grid, from LAMMPS's log (\`log.lammps\`): \`$grid\`; the program declares it with
  MPI_Cart_create (\`processors * * * map cart\`).
- Steps, from the log's \`Loop time\` lines (minimisation, NVE run, Langevin run):
$loops
- Call counts: \`expected/dumpi2ascii-counts.txt\`, counted from the tracer's own \`dumpi2ascii\` by
  \`tools/record/dumpi-counts.sh\` (calls per MPI function, point-to-point sends and bytes).
README
}

if [ -n "${README_ONLY:-}" ]; then readme; exit 0; fi
rm -rf "$dir"
# shellcheck disable=SC2086
"$root/tools/record/record.sh" "$dir" 8 --input "$input" $fmt -- \
    lmp -in in.pppm -var nve "$nve" -var langevin "$langevin" -log log.lammps -screen none
[ "$fmt" = --otf2 ] && exit 0
mkdir -p "$dir/expected"
"$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
(cd "$dir" && tar cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
for f in stdout.txt stderr.txt; do [ -s "$dir/$f" ] || rm -f "$dir/$f"; done
readme
