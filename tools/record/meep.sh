#!/bin/bash
# Records Meep (MIT's FDTD electromagnetics solver; Debian's package `meep-openmpi`, its binary
# `meep`, unmodified) on a small 2-D waveguide (tools/record/inputs/waveguide.ctl) with SST DUMPI
# preloaded, or with tools/otf2-tracer. Meep cuts the cell into one box of voxels per process and
# exchanges the boxes' boundary fields every time step (Isend/Irecv between the processes whose
# boxes touch). Nobody tuned tracelogic for it. Run from the repository root:
#
#   tools/record/meep.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--pack] [NAME=VALUE...]]
#
# RANKS defaults to 8. NAME=VALUE are the input's parameters (sx, sy, res, until: see
# waveguide.ctl; default a 16 x 8 cell at resolution 10, 400 time steps). --rankfile FILE binds
# the ranks as FILE says (Open MPI rankfile; Meep's boxes follow rank numbers, not cores).
# --pack packs the trace into dumpi.tar.zst / trace.tar.zst (the corpus form); without it the
# rank files stay as they are (the held-out form). Needs `meep-openmpi` and `hdf5-tools`
# (apt), DUMPI (tools/record/build-dumpi.sh; DUMPI_PREFIX, default /opt/dumpi) or the OTF2
# tracer (tools/otf2-tracer/build.sh) and otf2-print.
#
# The truth written to OUT_DIR/expected, independently of tracelogic:
#   chunk-layout.txt   each rank's box and the pairs of boxes sharing a face or touching at a
#                      corner (tools/record/meep-layout.py on the chunk layout Meep itself writes
#                      in an untraced twin run without PML)
#   steps.txt          the time steps Meep reports ("run 0 finished at t = ... (N timesteps)")
#   log-times.tsv, log-calls.tsv  (DUMPI) Meep's stages dated on the trace's clock: the iotimes
#                      shim (tools/record/iotimes.c, IOTIMES_WRITES=1) logs every write(2) of
#                      stdout, tools/record/log-times.py dates the lines "Initializing structure",
#                      "time for set_epsilon", "on time step" and "run 0 finished" and counts the
#                      MPI calls between them
#   perrank.txt        per-rank sends, bytes, receives from the tracer's decoder (per-rank.sh)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt   calls per function (dumpi-counts.sh,
#                      otf2-counts.sh)
#   late-sender.txt    (DUMPI) Scalasca's late-sender waiting per rank from dumpi2ascii
#                      (tools/record/late-sender.py)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: meep.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE] [--pack] [NAME=VALUE...]]}
ranks=${2:-8}
shift $(( $# < 2 ? $# : 2 ))
otf2=(); mpiopt=(); rankfile=; pack=no; params=()
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) otf2=(--otf2); shift ;;
        --rankfile) rankfile=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); mpiopt=(--mpirun-opt "--rankfile $rankfile"); shift 2 ;;
        --pack) pack=yes; shift ;;
        *=*) params+=("$1"); shift ;;
        *) echo "meep.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
command -v meep >/dev/null || { echo "meep.sh: meep is missing (apt install meep-openmpi)" >&2; exit 1; }
command -v h5dump >/dev/null || { echo "meep.sh: h5dump is missing (apt install hdf5-tools)" >&2; exit 1; }
ctl=$root/tools/record/inputs/waveguide.ctl
res=10
for p in "${params[@]}"; do case $p in res=*) res=${p#res=} ;; esac; done

# Untraced twin: Meep's own chunk layout, one box per rank (no PML, so no extra chunks).
twin=$(mktemp -d /tmp/meep-layout.XXXXXX)
trap 'rm -rf "$twin"' EXIT
rmdir "$twin"
# shellcheck disable=SC2086
"$root/tools/record/record.sh" "$twin" "$ranks" --untraced ${mpiopt[@]+"${mpiopt[@]}"} --input "$ctl" -- \
    meep ${params[@]+"${params[@]}"} 'pml?=false' 'layout-only?=true' waveguide.ctl > /dev/null

rm -rf "$out"
shim=()
if [ ${#otf2[@]} -eq 0 ]; then
    gcc -shared -fPIC -O2 -o "$twin.so" "$root/tools/record/iotimes.c" -ldl
    trap 'rm -rf "$twin" "$twin.so"' EXIT
    export IOTIMES_WRITES=1 IOTIMES_MATCH=stdout
    shim=(--preload "$twin.so" --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH")
fi
"$root/tools/record/record.sh" "$out" "$ranks" ${otf2[@]+"${otf2[@]}"} ${mpiopt[@]+"${mpiopt[@]}"} ${shim[@]+"${shim[@]}"} \
    --input "$ctl" -- meep 'verbose?=true' ${params[@]+"${params[@]}"} waveguide.ctl
[ -n "$rankfile" ] && cp "$rankfile" "$out/rankfile"
dpkg-query -W -f 'package: ${Package} ${Version}\n' meep-openmpi >> "$out/versions.txt"
mkdir -p "$out/expected"
h5dump "$twin/chunk-layout.h5" | "$root/tools/record/meep-layout.py" "$res" > "$out/expected/chunk-layout.txt"
sed -n 's/^run [0-9]* finished at t = \([0-9.]*\) (\([0-9]*\) timesteps)$/time \1 steps \2/p' "$out/stdout.txt" > "$out/expected/steps.txt"
cd "$out"
if [ ${#otf2[@]} -gt 0 ]; then
    "$root/tools/record/per-rank.sh" trace/traces.otf2 > expected/perrank.txt
    "$root/tools/record/otf2-counts.sh" trace/traces.otf2 > expected/otf2-print-counts.txt
    [ $pack = yes ] && { tar -cf - trace | zstd -19 -q -o trace.tar.zst && rm -rf trace; }
else
    export DUMPI2ASCII=${DUMPI2ASCII:-${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii}
    "$root/tools/record/per-rank.sh" . > expected/perrank.txt
    "$root/tools/record/dumpi-counts.sh" . > expected/dumpi2ascii-counts.txt
    "$root/tools/record/late-sender.py" . > expected/late-sender.txt
    "$root/tools/record/log-times.py" . stdout.txt 'structure=^Initializing structure' \
        'epsilon=^time for set_epsilon' 'step=^on time step' 'finished=^run 0 finished'
    [ $pack = yes ] && { tar -cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin; }
fi
echo "recorded $out ($(du -sh . | cut -f1)): $(cat expected/steps.txt)"
