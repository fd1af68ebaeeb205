#!/bin/bash
# Records GROMACS (Debian's package `gromacs`, its MPI build `gmx_mpi`, unmodified) running
# molecular dynamics of a box of SPC/E water with SST DUMPI preloaded: domain decomposition with
# halo exchange between neighbouring cells, PME electrostatics on a second (pencil) decomposition
# of the same ranks with 3-D FFT transposes, neighbour search and repartitioning every `nstlist`
# steps. Nobody tuned tracelogic for it. Run from the repository root:
#
#   tools/record/gromacs-water.sh [OUT_DIR [RANKS "DDX DDY DDZ" STEPS [MDRUN_OPTS...]]]
#
# Default: tests/data/apps/gromacs-water-12, 12 ranks on a 3x2x2 domain grid, 40 steps, a 4 nm
# box (2,165 molecules). The system is built here by `gmx solvate` and `gmx grompp` from
# GROMACS's own spc216 water and OPLS-AA force field (inputs in the run folder: md.mdp,
# topol.top). Needs `gromacs` (apt) and DUMPI (tools/record/build-dumpi.sh).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/tests/data/apps/gromacs-water-12}
ranks=${2:-12}
dd=${3:-"3 2 2"}
steps=${4:-40}
shift $(( $# < 4 ? $# : 4 ))
extra=("$@")
command -v gmx_mpi >/dev/null || { echo "gromacs-water.sh: gmx_mpi is missing (apt install gromacs)" >&2; exit 1; }
work=$(mktemp -d /tmp/gromacs-water.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
gmx -quiet solvate -cs spc216.gro -box 4.0 4.0 4.0 -o water.gro > solvate.log 2>&1
molecules=$(awk '/Number of solvent molecules/ {print $5}' solvate.log)
cat > topol.top <<TOP
#include "oplsaa.ff/forcefield.itp"
#include "oplsaa.ff/spce.itp"

[ system ]
SPC/E water box

[ molecules ]
SOL $molecules
TOP
cat > md.mdp <<MDP
integrator      = md
dt              = 0.002
nsteps          = $steps
nstlog          = 10
nstenergy       = 10
nstcalcenergy   = 10
cutoff-scheme   = Verlet
nstlist         = 10
coulombtype     = PME
rcoulomb        = 1.0
rvdw            = 1.0
tcoupl          = v-rescale
tc-grps         = System
tau-t           = 0.1
ref-t           = 300
gen-vel         = yes
gen-temp        = 300
gen-seed        = 7
MDP
gmx -quiet grompp -f md.mdp -c water.gro -p topol.top -o topol.tpr > grompp.log 2>&1
rm -rf "$dir"
# shellcheck disable=SC2086
"$root/tools/record/record.sh" "$dir" "$ranks" --input topol.tpr -- \
    gmx_mpi mdrun -s topol.tpr -ntomp 1 -dd $dd -npme 0 "${extra[@]}"
cp md.mdp topol.top "$dir"/
dpkg-query -W -f 'package: ${Package} ${Version}\n' gromacs >> "$dir/versions.txt"
cd "$dir"
rm -f topol.tpr confout.gro ener.edr state.cpt traj.trr ./*.xtc
tar -cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
mkdir -p expected
"$root/tools/record/dumpi-counts.sh" dumpi.tar.zst > expected/dumpi2ascii-counts.txt
echo "recorded $dir ($(du -sh . | cut -f1))"
