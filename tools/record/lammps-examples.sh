#!/bin/sh
# Records LAMMPS example inputs from Debian's lammps-examples package (not the corpus's melt):
# `crack` (2-D, 8 ranks, 5,000 steps, neighbour lists rebuilt with `delay 5`), `indent.min`
# (6 ranks, seven minimisations) and `peptide` (8 ranks, 300 steps, PPPM and SHAKE), each with
# SST DUMPI preloaded into the unmodified `lmp`. Their logs (log.lammps) give the truth: the
# processor grid, the steps of each run and the neighbour-list builds. Run from the repository
# root (packages lammps, lammps-examples; DUMPI built by tools/record/build-dumpi.sh):
#
#   tools/record/lammps-examples.sh OUT_ROOT
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-examples.sh OUT_ROOT}
ex=/usr/share/lammps/examples
rec=$root/tools/record/record.sh
mkdir -p "$out"
rm -rf "$out/crack-8" "$out/indent-min-6" "$out/peptide-8"
"$rec" "$out/crack-8" 8 --input "$ex/crack/in.crack" -- lmp -in in.crack -log log.lammps -screen none
"$rec" "$out/indent-min-6" 6 --input "$ex/indent/in.indent.min" -- lmp -in in.indent.min -log log.lammps -screen none
"$rec" "$out/peptide-8" 8 --input "$ex/peptide/in.peptide" --input "$ex/peptide/data.peptide" -- \
    lmp -in in.peptide -log log.lammps -screen none
for d in crack-8 indent-min-6 peptide-8; do
    grep -h "processor grid\|Loop time\|Neighbor list builds" "$out/$d/log.lammps"
done
echo "lammps-examples.sh: runs in $out; check them with: tools/record/check-heldout.py $out"
