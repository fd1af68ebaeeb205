#!/bin/sh
# Records LAMMPS example inputs from Debian's lammps-examples package (not the corpus's melt):
# `crack` (2-D, 8 ranks, 5,000 steps, neighbour lists rebuilt with `delay 5`), `indent.min`
# (6 ranks, seven minimisations), `peptide` (8 ranks, 300 steps, PPPM and SHAKE), `min` (4 ranks,
# 1,000 steps then a minimisation), `micelle` (2-D, 8 ranks, 2 x 1,000 steps, bonds), `shear`
# (EAM metal, 6 ranks, 100 + 3,000 steps) and `balance` (8 ranks, 10,000 steps, recursive
# bisection rebalanced every 50 steps: no fixed neighbours), each with
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
runs="crack-8 indent-min-6 peptide-8 min-4 micelle-8 shear-6 balance-8"
for d in $runs; do rm -rf "${out:?}/$d"; done
"$rec" "$out/crack-8" 8 --input "$ex/crack/in.crack" -- lmp -in in.crack -log log.lammps -screen none
"$rec" "$out/indent-min-6" 6 --input "$ex/indent/in.indent.min" -- lmp -in in.indent.min -log log.lammps -screen none
"$rec" "$out/peptide-8" 8 --input "$ex/peptide/in.peptide" --input "$ex/peptide/data.peptide" -- \
    lmp -in in.peptide -log log.lammps -screen none
"$rec" "$out/min-4" 4 --input "$ex/min/in.min" -- lmp -in in.min -log log.lammps -screen none
"$rec" "$out/micelle-8" 8 --input "$ex/micelle/in.micelle" --input "$ex/micelle/data.micelle" \
    --input "$ex/micelle/def.micelle" -- lmp -in in.micelle -log log.lammps -screen none
"$rec" "$out/shear-6" 6 --input "$ex/shear/in.shear" --input "$ex/shear/Ni_u3.eam" -- \
    lmp -in in.shear -log log.lammps -screen none
"$rec" "$out/balance-8" 8 --input "$ex/balance/in.balance" -- lmp -in in.balance -log log.lammps -screen none
for d in $runs; do
    grep -h "processor grid\|Loop time\|Neighbor list builds\|force evaluations" "$out/$d/log.lammps"
done
echo "lammps-examples.sh: runs in $out; check them with: tools/record/check-heldout.py $out"
