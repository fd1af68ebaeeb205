#!/bin/sh
# Records a fifth batch of LAMMPS example inputs from Debian's lammps-examples package, with
# SST DUMPI preloaded into the unmodified `lmp`, each with its `run` lengths divided so that a
# trace stays small (the only edit; the edited input is kept in the run folder beside
# log.lammps, which gives the truth: grid, steps, neighbour-list builds): `airebo` (4 ranks,
# many-body hydrocarbon potential), `coreshell` (6, two runs, long-range Coulomb), granular
# `pour.drum` (4, two runs), `min.box` (4, a run then six minimisations), `multi` `colloid`
# (8), `atm` (8, three-body), `flow.pois` (4), `streitz.ewald`
# (4, charge equilibration) and `cmap` (4, CHARMM cross terms). Debian's `lmp` lacks EXTRA-FIX,
# which `controller` and `ttm` need.
#
#   tools/record/lammps-examples-fifth.sh OUT_ROOT
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-examples-fifth.sh OUT_ROOT}
batch=lammps-examples-fifth.sh
. "$root/tools/record/lammps-batch.sh"
one airebo-4 4 "$ex/airebo/in.airebo" 2 "$ex/airebo/data.airebo" "$ex/airebo/CH.airebo"
one coreshell-6 6 "$ex/coreshell/in.coreshell" 10 "$ex/coreshell/data.coreshell"
one pour-drum-4 4 "$ex/granular/in.pour.drum" 10
one min-box-4 4 "$ex/min/in.min.box" 10
one colloid-multi-8 8 "$ex/multi/in.colloid" 10
one atm-8 8 "$ex/atm/in.atm" 1
one flow-pois-4 4 "$ex/flow/in.flow.pois" 50
one streitz-ewald-4 4 "$ex/streitz/in.streitz.ewald" 1 "$ex/streitz/data.streitz" \
    "$ex/streitz/AlO.streitz" "$ex/streitz/AlO.eam.alloy"
one cmap-4 4 "$ex/cmap/in.cmap" 1000 "$ex/cmap/gagg.data" "$ex/cmap/charmm22.cmap"
