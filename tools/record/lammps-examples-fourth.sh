#!/bin/sh
# Records a fourth batch of LAMMPS example inputs from Debian's lammps-examples package, with
# SST DUMPI preloaded into the unmodified `lmp`, each with its `run` lengths divided so that a
# trace stays small (the only edit; the edited input is kept in the run folder beside
# log.lammps, which gives the truth: grid, steps, neighbour-list builds): `tersoff` (4 ranks,
# five runs, each with another potential), `threebody` (8, four runs), `eim` (6),
# `ellipse.gayberne` (6, 2-D, two runs), `peri.pmb` (4, peridynamics), `wall.specular` (4)
# and `srd.pure` (4, stochastic rotation dynamics). Debian's `lmp` lacks the packages of `meam`,
# VISCOSITY `mp.2d` and reaxff; KAPPA `mp` needs its first run a multiple of 1,000 steps.
#
#   tools/record/lammps-examples-fourth.sh OUT_ROOT
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-examples-fourth.sh OUT_ROOT}
batch=lammps-examples-fourth.sh
. "$root/tools/record/lammps-batch.sh"
one tersoff-4 4 "$ex/tersoff/in.tersoff" 1 "$ex/tersoff/Si.tersoff" "$ex/tersoff/Si.tersoff.mod" \
    "$ex/tersoff/Si.tersoff.modc" "$ex/tersoff/BNC.tersoff"
one threebody-8 8 "$ex/threebody/in.threebody" 1 "$ex/threebody/Si.sw" \
    "$ex/threebody/CdTeZnSeHgS0.sw" "$ex/threebody/InP.vashishta" "$ex/threebody/BNC.tersoff"
one eim-6 6 "$ex/eim/in.eim" 5 "$ex/eim/data.eim" "$ex/eim/ffield.eim"
one ellipse-gayberne-6 6 "$ex/ellipse/in.ellipse.gayberne" 10
one peri-pmb-4 4 "$ex/peri/in.peri.pmb" 5
one wall-specular-4 4 "$ex/wall/in.wall.specular" 50
one srd-pure-4 4 "$ex/srd/in.srd.pure" 25
