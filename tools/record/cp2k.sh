#!/bin/bash
# Records CP2K (Debian's package `cp2k`, its MPI binary `cp2k.psmp`, unmodified, linked to Open MPI
# and ScaLAPACK) running CP2K's own example H2O.inp: a water molecule with Quickstep (GPW), NVE
# molecular dynamics of 5 steps, each step an SCF (1-8 iterations). Matrices are DBCSR/ScaLAPACK
# blocks on a 2-D BLACS process grid (printed by PRINT_LEVEL HIGH: `num_pe=(P, Q)` and the
# `blacs2mpi` map), plane-wave grids on 1-D slabs ("Real space group dimensions N 1").
# Nobody tuned tracelogic for it. Run from the repository root:
#
#   tools/record/cp2k.sh OUT_DIR [RANKS [--dumpi] [--rankfile FILE]]
#
# Default: 4 ranks, OTF2 with tools/otf2-tracer (OTF2_TRACER names the library; CP2K needs its
# Fortran wrappers of MPI_Cart_create/MPI_Cart_sub). --dumpi records with SST DUMPI instead (the
# Fortran bindings fixed by build-dumpi.sh, DUMPI_PREFIX names that build), but under DUMPI CP2K
# computes something else: on 4 ranks every SCF stops unconverged after 50 iterations and the
# energy is -34.4 instead of the untraced -17.14 a.u. (a Fortran binding still corrupts data;
# not found), in 9 minutes instead of 80 s, so the DUMPI trace is not a faithful record of the
# run. --rankfile FILE places ranks by an Open MPI rankfile (kept as OUT_DIR/rankfile).
# CP2K_STEPS=N runs N MD steps instead of 5 (the input's STEPS line changed, the input kept in
# OUT_DIR), to show what grows with the step count.
# Afterwards OUT_DIR holds the trace (unpacked: trace/ or dumpi-*.bin, and packed: trace.tar.zst or
# dumpi.tar.zst), cp2k.out (CP2K's output), the input, expected/perrank.txt (the decoder's
# per-rank counts, tools/record/per-rank.sh), expected/cp2k-log.txt (the log's grids and SCF
# counts) and expected/log-times.tsv, log-calls.tsv: CP2K's stages dated on the trace's clock
# (the iotimes shim, tools/record/iotimes.c with IOTIMES_WRITES=1, logs every write(2) of
# rank 0's stdout; tools/record/log-times.py dates the start of each SCF ("SCF WAVEFUNCTION
# OPTIMIZATION"), its convergence, each "MD| Step number" line, the timing report and the end).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: cp2k.sh OUT_DIR [RANKS [--dumpi] [--rankfile FILE]]}
ranks=${2:-4}
shift $(( $# < 2 ? $# : 2 ))
opts=(--otf2)
rankfile=
while [ $# -gt 0 ]; do
    case $1 in
        --dumpi) opts=(--fortran); shift ;;
        --otf2) opts=(--otf2); shift ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        *) echo "cp2k.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
command -v cp2k.psmp >/dev/null || { echo "cp2k.sh: cp2k.psmp is missing (apt-get install -y cp2k)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$dir"
shim=$(mktemp -d /tmp/iotimes.XXXXXX)
gcc -shared -fPIC -O2 -o "$shim/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
input="$root/tools/record/inputs/cp2k-h2o-md.inp"
if [ -n "${CP2K_STEPS:-}" ]; then
    sed "s/^\( *STEPS\) 5\$/\1 $CP2K_STEPS/" "$input" > "$shim/cp2k-h2o-md.inp"
    grep -q "^ *STEPS $CP2K_STEPS\$" "$shim/cp2k-h2o-md.inp" || { echo "cp2k.sh: STEPS not set" >&2; exit 1; }
    input=$shim/cp2k-h2o-md.inp
fi
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout "$root/tools/record/record.sh" "$dir" "$ranks" \
    --input "$input" --preload "$shim/libiotimes.so" \
    "${opts[@]}" --mpirun-opt "-x OMP_NUM_THREADS=1 -x IOTIMES_WRITES -x IOTIMES_MATCH" -- cp2k.psmp -i cp2k-h2o-md.inp
rm -rf "$shim"
cd "$dir"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt cp2k.out
[ -s stderr.txt ] || rm -f stderr.txt
rm -f ./*.xyz ./*.ener ./*.restart ./*.restart.bak-* ./*.wfn ./*.wfn.bak-* ./*.cube ./*.cell ./*.LagrangeMultLog ./*-nonbonded_nl_p*.out ./*_localLog_p*.out
mkdir -p expected
if [ "${opts[0]}" = --otf2 ]; then
    "$root/tools/record/per-rank.sh" trace/traces.otf2 > expected/perrank.txt
    tar -cf - trace | zstd -19 -q -o trace.tar.zst
else
    DUMPI2ASCII=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii "$root/tools/record/per-rank.sh" . > expected/perrank.txt
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst
fi
# The log's truth: the BLACS grid, the slab grids, SCF iterations per MD step.
{
    grep -m1 'Total number of message passing processes' cp2k.out
    grep -m1 -A1 'num_pe=' cp2k.out | head -1
    awk '/blacs2mpi=/ {p = 1} p && /para_env/ {exit} p' cp2k.out | head -20
    grep -m1 'Real space group dimensions' cp2k.out
    grep -c 'SCF run converged' cp2k.out | sed 's/^/SCF runs: /'
    grep 'SCF run converged' cp2k.out
    grep -c '^ MD| Step number' cp2k.out | sed 's/^/MD steps: /'
} > expected/cp2k-log.txt
"$root/tools/record/log-times.py" . cp2k.out 'scf=SCF WAVEFUNCTION OPTIMIZATION' \
    'converged=\*\*\* SCF run (NOT )?converged' 'step=MD\| Step number +[0-9]+' \
    'timing=T I M I N G' 'ended=PROGRAM ENDED AT'
echo "recorded $dir ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
