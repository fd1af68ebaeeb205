#!/bin/sh
# Records a third batch of LAMMPS example inputs from Debian's lammps-examples package, with
# SST DUMPI preloaded into the unmodified `lmp`, each with its `run` lengths divided so that a
# trace stays small (the only edit; the edited input is kept in the run folder beside
# log.lammps, which gives the truth: grid, steps, neighbour-list builds): `nemd` (6 ranks),
# `colloid` (8, 2-D, a rebuild every few steps with `delay 0`, a barostat's reductions every
# step), `dipole` (4, 2-D), `dreiding` (4, molecular), `granregion.funnel` (4, granular, three
# runs) and `body` (4).
#
#   tools/record/lammps-examples-third.sh OUT_ROOT
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-examples-third.sh OUT_ROOT}
batch=lammps-examples-third.sh
. "$root/tools/record/lammps-batch.sh"
one nemd-6 6 "$ex/nemd/in.nemd" 50
one colloid-8 8 "$ex/colloid/in.colloid" 20
one dipole-4 4 "$ex/dipole/in.dipole" 10
one dreiding-4 4 "$ex/dreiding/in.dreiding" 1 "$ex/dreiding/data.dreiding"
one granregion-funnel-4 4 "$ex/granregion/in.granregion.funnel" 100
one body-4 4 "$ex/body/in.body" 10 "$ex/body/data.body"
