#!/bin/sh
# Records a second batch of LAMMPS example inputs from Debian's lammps-examples package, with
# SST DUMPI preloaded into the unmodified `lmp`, each with its `run` lengths divided so that a
# trace stays small (the edit is the only change: `sed` below; the edited input is kept in the
# run folder beside log.lammps, which gives the truth: grid, runs, steps):
# `indent` (4 ranks, 2 runs), `msst` (4, 2 runs of 100), `ellipse.gayberne` (8, 2 runs),
# `hugoniostat` (6, minimisation + 3 runs, a restart file between), `friction` (6, 1 run),
# `obstacle` (4), `flow.couette` (8), `rigid` (8, rigid bodies), `deposit.atom` (4, atoms added
# every 100 steps) and `pour` (8, granular, 2 runs, particles poured in); and `melt` as shipped
# (8 ranks, 250 steps, neighbour lists every 20 steps unchecked: most steps hold no collective),
# with two `run 250` (`melt-2runs-8`), with four identical runs in a `label`/`jump` loop
# (`melt-loop4-8`), and with its neighbour lists checked every step and five `run 100` in such a
# loop (`melt-check-loop5-8`).
#
#   tools/record/lammps-examples-more.sh OUT_ROOT [RUN...]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-examples-more.sh OUT_ROOT [RUN...]}
shift
batch=lammps-examples-more.sh
want="$*"
. "$root/tools/record/lammps-batch.sh"
one indent-4 4 "$ex/indent/in.indent" 20
one msst-4 4 "$ex/msst/in.msst" 1
one gayberne-8 8 "$ex/ellipse/in.ellipse.gayberne" 4
one hugoniostat-6 6 "$ex/hugoniostat/in.hugoniostat" 10
one friction-6 6 "$ex/friction/in.friction" 10
one obstacle-4 4 "$ex/obstacle/in.obstacle" 10
one couette-8 8 "$ex/flow/in.flow.couette" 5
one rigid-8 8 "$ex/rigid/in.rigid" 5 "$ex/rigid/data.rigid"
one deposit-4 4 "$ex/deposit/in.deposit.atom" 5
one pour-8 8 "$ex/pour/in.pour" 10
one melt-8 8 "$ex/melt/in.melt" 1
sed 's/^run[[:space:]]*250/run 250\nrun 250/' "$ex/melt/in.melt" > "$tmp/melt-2runs"
one melt-2runs-8 8 "$tmp/melt-2runs" 1
sed 's/^run[[:space:]]*250/variable i loop 4\nlabel again\nrun 250\nnext i\njump SELF again/' "$ex/melt/in.melt" > "$tmp/melt-loop4"
one melt-loop4-8 8 "$tmp/melt-loop4" 1
sed 's/^neigh_modify.*/neigh_modify\tevery 1 delay 0 check yes/; s/^run[[:space:]]*250/variable i loop 5\nlabel again\nrun 100\nnext i\njump SELF again/' \
    "$ex/melt/in.melt" > "$tmp/melt-check-loop5"
one melt-check-loop5-8 8 "$tmp/melt-check-loop5" 1
echo "lammps-examples-more.sh: runs in $out; check them with: tools/record/check-heldout.py $out"
