#!/bin/bash
# Records LIGGGHTS-PUBLIC 3.8.0 (discrete element method for granular matter, a fork of LAMMPS)
# as Debian ships it (`apt-get install liggghts`: /usr/bin/liggghts, unchanged, Open MPI 4.1.4),
# with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for LIGGGHTS. Run
# from the repository root:
#
#   tools/record/liggghts.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--grid PXxPYxPZ]]
#
# The input written here (deterministic, no example ships with the package; LIGGGHTS's packing
# tutorial, smaller): 2,000 spheres (radius 2.5 mm) inserted at once into a closed 10 x 10 x 10 cm
# box with six granular walls, settling under gravity for 4,000 steps of 10 us (Hertz contacts
# with tangential history, nve/sphere), thermo output every 500 steps. LIGGGHTS decomposes the
# box into a 3-D grid of sub-boxes, one per rank, and prints the grid it chose ("1 by 2 by 2 MPI
# processor grid" on 4 ranks, "2 by 2 by 2" on 8; --grid sets it with LIGGGHTS's `processors`
# command); every step each rank exchanges ghost atoms with its face neighbours (MPI_Sendrecv /
# Irecv+Send along x, y, z; `communicate single vel yes`), and every neighbour-list build
# migrates atoms; thermo steps sum over all ranks (MPI_Allreduce). Only rank 0 prints. RANKS
# defaults to 4. --rankfile FILE binds the ranks as FILE says (kept as OUT_DIR/rankfile).
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; unpacked files
# removed), in.pack (the input), liggghts.out (the program's output; log.liggghts removed),
# liggghts-rank0.out (the lines rank 0 wrote, which log-times.tsv numbers) and the truth in expected/, independently of tracelogic:
#   grid.txt        the processor grid LIGGGHTS printed ("PX by PY by PZ MPI processor grid")
#   thermo.tsv      the thermo lines (step, atoms, kinetic and rotational energy, volume), the
#                   "Loop time" line and the neighbour-list builds ("Neighbor list builds = N")
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   log-times.tsv, log-calls.tsv  the "Setting up run" line, every thermo line (step 0, 500, ...,
#                   4000) and the "Loop time" line dated on the trace's clock (iotimes shim,
#                   tools/record/iotimes.c, with IOTIMES_STDOUT_LINES=1), and the MPI calls
#                   between them (tools/record/log-times.py): 500 steps between thermo lines.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: liggghts.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--grid PXxPYxPZ]]}
ranks=${2:-4}
shift $(( $# < 2 ? $# : 2 ))
opts=(); rankfile=; otf2=no; grid=
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) opts+=(--otf2); otf2=yes; shift ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        --grid) grid=$2; shift 2 ;;
        *) echo "liggghts.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
command -v liggghts >/dev/null || { echo "liggghts.sh: liggghts is missing (apt-get install -y liggghts)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
processors=
[ -n "$grid" ] && processors="processors $(echo "$grid" | tr 'x' ' ')"
rm -rf "$out"
tmp=$(mktemp -d /tmp/liggghts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
cat > "$tmp/in.pack" <<EOF
# LIGGGHTS: 2000 spheres settling in a closed box (tools/record/liggghts.sh)
atom_style granular
atom_modify map array
boundary m m m
newton off
communicate single vel yes
units si
$processors
region reg block -0.05 0.05 -0.05 0.05 0.0 0.1 units box
create_box 1 reg
neighbor 0.002 bin
neigh_modify delay 0
fix m1 all property/global youngsModulus peratomtype 5.e6
fix m2 all property/global poissonsRatio peratomtype 0.45
fix m3 all property/global coefficientRestitution peratomtypepair 1 0.3
fix m4 all property/global coefficientFriction peratomtypepair 1 0.5
pair_style gran model hertz tangential history
pair_coeff * *
timestep 0.00001
fix gravi all gravity 9.81 vector 0.0 0.0 -1.0
fix xw1 all wall/gran model hertz tangential history primitive type 1 xplane -0.05
fix xw2 all wall/gran model hertz tangential history primitive type 1 xplane 0.05
fix yw1 all wall/gran model hertz tangential history primitive type 1 yplane -0.05
fix yw2 all wall/gran model hertz tangential history primitive type 1 yplane 0.05
fix zw1 all wall/gran model hertz tangential history primitive type 1 zplane 0.0
fix zw2 all wall/gran model hertz tangential history primitive type 1 zplane 0.1
fix pts1 all particletemplate/sphere 15485863 atom_type 1 density constant 2500 radius constant 0.0025
fix pdd1 all particledistribution/discrete 32452843 1 pts1 1.0
region bc block -0.045 0.045 -0.045 0.045 0.005 0.095 units box
fix ins all insert/pack seed 32452867 distributiontemplate pdd1 vel constant 0. 0. -0.5 insert_every once overlapcheck yes all_in yes particles_in_region 2000 region bc
fix integr all nve/sphere
compute 1 all erotate/sphere
thermo_style custom step atoms ke c_1 vol
thermo 500
thermo_modify lost ignore norm no
compute_modify thermo_temp dynamic yes
run 4000
EOF
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout IOTIMES_STDOUT_LINES=1 \
    "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$tmp/in.pack" --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH -x IOTIMES_STDOUT_LINES" \
    -- liggghts -in in.pack
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt liggghts.out
rm -f log.liggghts
[ -s stderr.txt ] || rm -f stderr.txt
grep -q '^Loop time of .* for 4000 steps' liggghts.out || { echo "liggghts.sh: LIGGGHTS did not run the 4000 steps (liggghts.out)" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
grep 'MPI processor grid' liggghts.out | sed 's/^ *//' > expected/grid.txt
{
    echo "# thermo lines of liggghts.out: step, atoms, kinetic energy, rotational energy (c_1), volume; then the loop and the neighbour-list builds"
    awk '/^ *Step +Atoms/ { on = 1; next } /^Loop time/ { on = 0; print; next }
         on && /^ +[0-9]+ +[0-9]+ / { $1 = $1; gsub(/ /, "\t"); print }
         /^Neighbor list builds/ { print }' liggghts.out
} > expected/thermo.tsv
"$root/tools/record/expected-counts.sh" .
# every rank prints its own "insertion: proc N at X %" lines into the shared stdout; the iotimes
# offsets count rank 0's bytes only, so the lines are dated in rank 0's part of the log
grep -v '^insertion: proc [1-9]' liggghts.out > liggghts-rank0.out
"$root/tools/record/log-times.py" . liggghts-rank0.out 'setup=^Setting up run' 'thermo=^ +[0-9]+ +[0-9]+ +[0-9.e+-]+ ' \
    'loop=^Loop time of'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
