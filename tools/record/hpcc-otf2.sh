#!/bin/sh
# Records hpcc (Debian's `hpcc`, unmodified) at the given HPL process grids with the OTF2 tracer
# (tools/otf2-tracer) and the iotimes shim preloaded, and dates its test sections on the trace's
# clock (tools/record/hpcc-sections.py, through the official reader otf2-print). Used for the
# held-out check of docs/phases.md: grids the corpus lacks, checked against hpcc's own section
# marks. Run from the repository root:
#
#   tools/record/hpcc-otf2.sh OUT_ROOT PxQ [PxQ...]      e.g.  /work/heldout-hpcc 2x4 3x3
#
# Each grid gets OUT_ROOT/otf2-hpcc-<P*Q>: trace/ (OTF2), hpccoutf.txt, iotimes.log,
# expected/sections.tsv and expected/section-calls.tsv. The input is tools/record/inputs/
# hpccinf-2x3.txt with P and Q replaced (N=48, NB=8). Needs openmpi-bin, hpcc, otf2-tools and the
# tracer (OTF2_TRACER, default /opt/tracelogic-otf2/libtracelogic_otf2.so; tools/otf2-tracer/build.sh).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: hpcc-otf2.sh OUT_ROOT PxQ [PxQ...]}
shift
shim=$(mktemp -d /tmp/iotimes.XXXXXX)
gcc -shared -fPIC -O2 -o "$shim/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
for grid in "$@"; do
    p=${grid%x*} q=${grid#*x}
    np=$((p * q))
    dir=$out/otf2-hpcc-$np
    rm -rf "$dir"
    tmp=$(mktemp -d /tmp/hpccinf.XXXXXX)
    sed -e "11s/^[0-9]* /$p /" -e "12s/^[0-9]* /$q /" "$root/tools/record/inputs/hpccinf-2x3.txt" > "$tmp/hpccinf.txt"
    # mpi_yield_when_idle as tools/record/hpcc.sh: waiting ranks yield the oversubscribed cores.
    "$root/tools/record/record.sh" "$dir" "$np" --otf2 --input "$tmp/hpccinf.txt" \
        --preload "$shim/libiotimes.so" --mpirun-opt "--mca mpi_yield_when_idle 1" -- hpcc
    rm -rf "$tmp"
    "$root/tools/record/hpcc-sections.py" "$dir"
    grep -q "^HPL_nprow=$p\$" "$dir/hpccoutf.txt" && grep -q "^HPL_npcol=$q\$" "$dir/hpccoutf.txt" ||
        { echo "hpcc-otf2.sh: $dir/hpccoutf.txt does not run HPL on $grid" >&2; exit 1; }
done
rm -rf "$shim"
