#!/bin/sh
# Records a sixth batch of LAMMPS example inputs from Debian's lammps-examples package, with
# SST DUMPI preloaded into the unmodified `lmp`, each with its `run` lengths divided so that a
# trace stays small (the only edit; the edited input is kept in the run folder beside
# log.lammps, which gives the truth: grid, steps, neighbour-list builds): `comb` Si (4 ranks,
# charge-optimised many-body), `vashishta` SiO2 (8), VISCOSITY `nemd.2d` (4, three runs, a deforming
# box), `ELASTIC` (4, a minimisation of the box then six strains each minimised), `gjf` (4,
# Langevin GJF), `gcmc` LJ (4, grand-canonical Monte Carlo insertions), `fire` (4, a run then a minimisation)
# and `qeq` Buckingham (4, charge equilibration, six runs). Debian's `lmp` lacks MEAM, REAXFF,
# ML-SNAP, EXTRA-FIX (`ttm`, `numdiff`) and EXTRA-COMPUTE (`rdf-adf`), whose examples are left
# out, as KAPPA `heat` (its averages need the run lengths undivided).
#
#   tools/record/lammps-examples-sixth.sh OUT_ROOT
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-examples-sixth.sh OUT_ROOT}
batch=lammps-examples-sixth.sh
. "$root/tools/record/lammps-batch.sh"
one comb-si-4 4 "$ex/comb/in.comb.Si" 1 "$ex/comb/ffield.comb"
one vashishta-sio2-8 8 "$ex/vashishta/in.vashishta.sio2" 1 "$ex/vashishta/data.quartz" \
    "$ex/vashishta/SiO.1990.vashishta"
one nemd-2d-4 4 "$ex/VISCOSITY/in.nemd.2d" 50
one elastic-4 4 "$ex/ELASTIC/in.elastic" 1 "$ex/ELASTIC/Si.sw" "$ex/ELASTIC/displace.mod" \
    "$ex/ELASTIC/init.mod" "$ex/ELASTIC/potential.mod"
one gjf-4 4 "$ex/gjf/in.gjf.vhalf" 10 "$ex/gjf/argon.lmp" "$ex/gjf/ff-argon.lmp"
one gcmc-lj-4 4 "$ex/gcmc/in.gcmc.lj" 10
one fire-4 4 "$ex/fire/in.fire" 1
one qeq-buck-4 4 "$ex/qeq/in.qeq.buck" 1 "$ex/qeq/data.aC" "$ex/qeq/buck.inc" \
    "$ex/qeq/param.qeq1" "$ex/qeq/param.qeq2"
