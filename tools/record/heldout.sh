#!/bin/bash
# Records the held-out set: real runs of unmodified Debian MPI programs at rank counts, step
# counts and placements the corpus does not have, kept OUTSIDE the repository and never used to
# tune anything (docs/corpus.md, "Held-out check"). A fresh machine has none of them; this script
# records them again with the recording scripts beside it. Runs already present are skipped, so
# it can be interrupted and rerun. Then check every analysis on them:
#
#   tools/record/heldout.sh [OUT_ROOT [RUN...]]       (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT             (one table; OUT_ROOT/pairs.txt: compare verdicts)
#
# Needs the programs and tracers of docs/corpus.md (apt: gromacs lammps hpcc meep-openmpi cp2k
# hdf5-tools otf2-tools libotf2-trace-dev ray abyss; DUMPI: tools/record/build-dumpi.sh). Takes about an
# hour on 2 cores. RUN names one run of the list below (e.g. `gromacs-12-200 meep-16`).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
out=${1:-/work/heldout/runs}
shift $(( $# > 0 ? 1 : 0 ))
only=("$@")
mkdir -p "$out"

want() { # name: listed (or no list given) and not yet recorded
    local n
    if [ ${#only[@]} -gt 0 ]; then
        for n in "${only[@]}"; do [ "$n" = "$1" ] && break; done
        [ "$n" = "$1" ] || return 1
    fi
    [ -e "$out/$1" ] && { echo "heldout.sh: $1 exists, skipped" >&2; return 1; }
    echo "==> $1" >&2
}

# GROMACS water (md.log: grids, steps, load balancing). Without dynamic load balancing the step
# count is the only change; with it (turned on by GROMACS at a step md.log names) the steps change.
want gromacs-12-100 && "$rec/gromacs-water.sh" "$out/gromacs-12-100" 12 "3 2 2" 100 -dlb no
want gromacs-12-200 && "$rec/gromacs-water.sh" "$out/gromacs-12-200" 12 "3 2 2" 200 -dlb no
want gromacs-12-200-dlb && "$rec/gromacs-water.sh" "$out/gromacs-12-200-dlb" 12 "3 2 2" 200 -dlb yes
want gromacs-16-150 && "$rec/gromacs-water.sh" "$out/gromacs-16-150" 16 "4 2 2" 150 -dlb no
want gromacs-8-120-dlb && "$rec/gromacs-water.sh" "$out/gromacs-8-120-dlb" 8 "2 2 2" 120 -dlb yes
want gromacs-18-100-auto && "$rec/gromacs-water.sh" "$out/gromacs-18-100-auto" 18 "3 3 2" 100

# Meep (its chunk layout, step count and dated log lines are the truth).
want meep-8 && "$rec/meep.sh" "$out/meep-8" 8
want meep-8-again && "$rec/meep.sh" "$out/meep-8-again" 8
if want meep-8-rankfile; then
    rankfile 8 /tmp/heldout-rankfile-8
    "$rec/meep.sh" "$out/meep-8-rankfile" 8 --rankfile /tmp/heldout-rankfile-8
fi
want meep-12 && "$rec/meep.sh" "$out/meep-12" 12
want meep-16 && "$rec/meep.sh" "$out/meep-16" 16
want meep-12-3d && "$rec/meep.sh" "$out/meep-12-3d" 12 sx=8 sz=8 res=5 until=10
want meep-12-otf2 && "$rec/meep.sh" "$out/meep-12-otf2" 12 --otf2

# CP2K's H2O MD (OTF2: CP2K is not faithful under DUMPI, tools/record/cp2k.sh).
want cp2k-4 && "$rec/cp2k.sh" "$out/cp2k-4" 4
want cp2k-8 && "$rec/cp2k.sh" "$out/cp2k-8" 8

# hpcc on process grids the corpus lacks (sections dated; OTF2; hpcc-otf2.sh names them by ranks).
want otf2-hpcc-8 && "$rec/hpcc-otf2.sh" "$out" 2x4
want otf2-hpcc-9 && "$rec/hpcc-otf2.sh" "$out" 3x3

# LAMMPS melt under permuted rank numberings (lammps.sh writes OUT_ROOT/NAME).
for n in lammps-melt-12-reorder lammps-melt-27-reorder; do
    want "$n" && "$rec/lammps.sh" "$out" "$n"
done

# Ray, the genome assembler (polls with MPI_Iprobe; Ray's dated steps are the phases' truth).
want ray-4 && "$rec/ray.sh" "$out/ray-4" 4
want ray-4-otf2 && "$rec/ray.sh" "$out/ray-4-otf2" 4 --otf2
# (6 or 8 ranks on 2 shared cores: gigabytes of probes, docs/corpus.md "Ray")

# MrBayes (chain swaps between rank pairs drawn from a seed; built with MPI by mrbayes.sh) and
# ABySS's ABYSS-P (k-mers all-to-all, polls with MPI_Request_get_status; no rankfile run: bound
# two to a core its polling takes minutes and GBs, docs/corpus.md "MrBayes and ABySS").
want mrbayes-4 && "$rec/mrbayes.sh" "$out/mrbayes-4" 4
want mrbayes-4-otf2 && "$rec/mrbayes.sh" "$out/mrbayes-4-otf2" 4 --otf2
if want mrbayes-4-rankfile; then
    rankfile 4 /tmp/heldout-rankfile-4
    "$rec/mrbayes.sh" "$out/mrbayes-4-rankfile" 4 --rankfile /tmp/heldout-rankfile-4
fi
want mrbayes-8 && "$rec/mrbayes.sh" "$out/mrbayes-8" 8
want mrbayes-8-otf2 && "$rec/mrbayes.sh" "$out/mrbayes-8-otf2" 8 --otf2
want abyss-4 && "$rec/abyss.sh" "$out/abyss-4" 4
want abyss-4-otf2 && "$rec/abyss.sh" "$out/abyss-4-otf2" 4 --otf2
want abyss-8 && "$rec/abyss.sh" "$out/abyss-8" 8
want abyss-8-otf2 && "$rec/abyss.sh" "$out/abyss-8-otf2" 8 --otf2

# PT-Scotch's dgord (one MPI thread per rank, and one run with 2 at once), LIGGGHTS (DEM, the
# log's processor grid) and ABINIT (SCF, Fortran: DUMPI_PREFIX must name the build with the
# MPI_Pack fix), docs/corpus.md "PT-Scotch, LIGGGHTS, ABINIT".
for prog in scotch liggghts abinit; do
    want $prog-4 && "$rec/$prog.sh" "$out/$prog-4" 4
    want $prog-4-otf2 && "$rec/$prog.sh" "$out/$prog-4-otf2" 4 --otf2
    if want $prog-4-rankfile; then
        rankfile 4 /tmp/heldout-rankfile-4
        "$rec/$prog.sh" "$out/$prog-4-rankfile" 4 --rankfile /tmp/heldout-rankfile-4
    fi
    want $prog-8 && "$rec/$prog.sh" "$out/$prog-8" 8
    want $prog-8-otf2 && "$rec/$prog.sh" "$out/$prog-8-otf2" 8 --otf2
done
want scotch-8-threads && "$rec/scotch.sh" "$out/scotch-8-threads" 8 --threads 2

# Pairs whose compare verdict is known from the programs (check-heldout.py reads this file).
cat > "$out/pairs.txt" <<'PAIRS'
# A B expected — the same program and input (twice, another placement, another tracer) is similar
meep-8 meep-8-again similar
meep-8 meep-8-rankfile similar
meep-12 meep-12-otf2 similar
ray-4 ray-4-otf2 similar
gromacs-12-100 gromacs-12-200 similar
gromacs-12-200 gromacs-12-200-dlb similar
gromacs-12-100 gromacs-12-200-dlb similar
mrbayes-4 mrbayes-4-otf2 similar
mrbayes-4 mrbayes-4-rankfile similar
mrbayes-8 mrbayes-8-otf2 similar
abyss-4 abyss-4-otf2 similar
abyss-8 abyss-8-otf2 similar
mrbayes-8 abyss-8 different
scotch-4 scotch-4-otf2 similar
scotch-4 scotch-4-rankfile similar
scotch-8 scotch-8-otf2 similar
scotch-8 scotch-8-threads similar
liggghts-4 liggghts-4-otf2 similar
liggghts-4 liggghts-4-rankfile similar
liggghts-8 liggghts-8-otf2 similar
abinit-4 abinit-4-otf2 similar
abinit-4 abinit-4-rankfile similar
abinit-8 abinit-8-otf2 similar
scotch-4 liggghts-4 different
scotch-8 liggghts-8 different
abinit-4 scotch-4 different
abinit-8 liggghts-8 different
PAIRS
echo "heldout.sh: runs in $out" >&2
