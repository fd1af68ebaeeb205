#!/bin/sh
# Records OPM Flow (the black-oil reservoir simulator of the Open Porous Media initiative, 2022.10
# as Debian ships it: `apt-get install -y libopm-simulators-bin`, /usr/bin/flow, unchanged) as
# held-out runs, kept OUTSIDE the repository and never used to tune anything (docs/corpus.md,
# "Held-out check"), with SST DUMPI preloaded or with tools/otf2-tracer. From the repository root:
#
#   tools/record/opm-flow.sh [OUT_ROOT [RUN...]]     (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT opm-...     (one table; OUT_ROOT/opm-pairs.txt lists
#                                                      pairs with their expected compare verdict)
#
# Input decks: the public SPE benchmark decks of github.com/OPM/opm-data (nothing is downloaded
# here: OPM_DATA, default /work/heldout/inputs/opm-data, must hold a copy of that repository's
# spe1/SPE1CASE1.DATA and spe9/{SPE9_CP_SHORT.DATA,SPE9.GRDECL,PERMVALUES.DATA,TOPSVALUES.DATA}).
#   SPE1CASE1      10 x 10 x 3 = 300 cells, 3-phase black oil, 2 wells, 120 monthly report steps
#   SPE9_CP_SHORT  24 x 25 x 15 = 9000 cells, 26 wells, 21 report steps of 10 days; opm-data's copy
#                  quotes well names with trailing blanks ('INJE1 '), which Flow 2022.10 rejects
#                  ("Illegal space in INJE1"): this script strips those blanks (sed), nothing else.
# Every run is `flow DECK --threads-per-process=1` (OMP_NUM_THREADS=1) on Open MPI. Flow reads the
# deck on every rank, partitions the grid with Zoltan (graph partitioning, ZoltanImbalanceTol 1.1),
# distributes it with overlap (ghost) cells, then per report step runs time steps; each time step
# runs Newton iterations, each an assembly with a ghost-cell exchange (point-to-point between the
# ranks whose partitions touch), a parallel BiCGStab + ILU0 linear solve (a halo exchange and
# MPI_Allreduce dot products per linear iteration) and convergence MPI_Allreduces; at each report
# step rank 0 gathers the solution for the restart/summary output (gathers, point-to-point).
#
# Only rank 0 prints (--output-filename keeps each rank's stdout apart: rank0.log). Its lines are
# dated on the trace's clock by the iotimes shim (tools/record/iotimes.c, IOTIMES_WRITES=1
# IOTIMES_MATCH=stdout: Flow's OpmLog writes each message to std::cout with std::endl, i.e. one
# fflush(stdout) per message, which the shim stamps; IOTIMES_STDOUT_LINES=1 sees nothing here, as
# std::cout holds glibc's stdout before the shim can replace it) and tools/record/log-times.py: "Reading deck file" (start of the
# input stage), "Processing grid" (grid set-up and partitioning), "Load balancing distributes"
# (the partition table), each "Report step N/M" (printed when report step N is done, N = 0 just
# before the first time step: the end of the initialisation), and "End of simulation" (after the
# last report step, before the final timing report).
#
# Runs: opm-spe1-4 (SPE1CASE1, 4 ranks, DUMPI), opm-spe1-4-otf2 (the same with the OTF2 tracer),
# opm-spe1-4-rankfile (4 ranks placed in reverse order on the cores by an Open MPI rankfile, kept
# as RUN/rankfile), opm-spe9-4 (SPE9_CP_SHORT, 4 ranks), opm-spe9-8 (8 ranks). A run's folder:
# command.txt, versions.txt, the deck, rank0.log (Flow's terminal log), stdout.txt/stderr.txt as
# mpirun merged them, Flow's own files (*.PRT, *.DBG, *.INFOSTEP: one line per time step; the
# binary restart/summary/grid files are removed), iotimes.log, the trace (dumpi.tar.zst or
# trace.tar.zst) and expected/: the decoders' counts (expected-counts.sh), log-times.tsv and
# log-calls.tsv (log-times.py) and truth.txt (report steps, time steps, Newton/linear iterations,
# the partition table and Flow's timing summary, from rank0.log).
#
# Needs Open MPI, SST DUMPI (DUMPI_PREFIX, default /opt/dumpi), the OTF2 tracer (OTF2_TRACER),
# otf2-print, zstd and gcc. On 2 cores a SPE1 run takes about 10-20 s, a SPE9 run 15-40 s.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
flow=/usr/bin/flow
[ -x $flow ] || { echo "opm-flow.sh: OPM Flow is missing (apt-get install -y libopm-simulators-bin)" >&2; exit 1; }
data=${OPM_DATA:-/work/heldout/inputs/opm-data}
for f in spe1/SPE1CASE1.DATA spe9/SPE9_CP_SHORT.DATA spe9/SPE9.GRDECL spe9/PERMVALUES.DATA spe9/TOPSVALUES.DATA; do
    [ -f "$data/$f" ] || { echo "opm-flow.sh: $data/$f missing (OPM_DATA: a copy of github.com/OPM/opm-data)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d /tmp/opm-flow.XXXXXX)
trap 'rm -rf "$build"' EXIT
gcc -shared -fPIC -O2 -o "$build/libiotimes.so" "$rec/iotimes.c" -ldl
mkdir -p "$build/spe1" "$build/spe9"
cp "$data/spe1/SPE1CASE1.DATA" "$build/spe1/"
cp "$data/spe9/SPE9.GRDECL" "$data/spe9/PERMVALUES.DATA" "$data/spe9/TOPSVALUES.DATA" "$build/spe9/"
sed -E "s/'([A-Z0-9]+) +'/'\\1'/g" "$data/spe9/SPE9_CP_SHORT.DATA" > "$build/spe9/SPE9_CP_SHORT.DATA"

# The truth from Flow's own terminal log, independently of tracelogic.
cat > "$build/truth.py" <<'EOF'
import re, sys
log = open(sys.argv[1], errors="replace").read()
log = re.sub(r"\x1b\[[0-9;]*m", "", log)
def one(rx):
    m = re.search(rx, log, re.M)
    return m.group(0).strip() if m else "(missing)"
print("log: " + one(r"^Using \d+ MPI processes.*$"))
# "Report step N/M at day ..." is printed once the time steps of report step N are done (N = 0:
# before the first time step); the last report step ends with "End of simulation".
reports = re.findall(r"^Report step +(\d+)/(\d+)", log, re.M)
print("'Report step N/M' lines: %d (N = %s..%s, M = %s)" % (len(reports), reports[0][0], reports[-1][0], reports[-1][1])
      if reports else "report steps: none")
steps = re.findall(r"^Starting time step", log, re.M)
print("time steps started: %d" % len(steps))
its = re.findall(r"Newton its=\s*(\d+), linearizations=\s*(\d+) .*?linear its=\s*(\d+)", log)
print("per time step sums: Newton its %d, linearizations %d, linear its %d"
      % tuple(sum(int(x[i]) for x in its) for i in range(3)))
print("time step chops (failed steps): %d" % len(re.findall(r"[Cc]hopping|Timestep chopped|Solver convergence failure", log)))
m = re.search(r"^Load balancing distributes.*?\n(?:.*\n){2}((?:\s+\d+.*\n)+)-+\n\s+sum.*\n", log, re.M)
if m:
    print("partition (Zoltan): " + one(r"^Load balancing distributes.*$"))
    for line in m.group(0).splitlines()[1:]:
        print("  " + line)
m = re.search(r"^Load balancing distributed the wells.*?\n-+\n((?:\s+\S+\s+[\d ]+\n)+)", log, re.M)
if m:
    print("wells by rank: " + "; ".join(" ".join(l.split()) for l in m.group(1).splitlines()))
m = re.search(r"^=+\s+End of simulation\s+=+\n((?:.*\n)*)", log, re.M)
if m:
    for line in m.group(1).splitlines():
        if line.strip():
            print("final: " + line.rstrip())
EOF

runs="opm-spe1-4 opm-spe1-4-otf2 opm-spe1-4-rankfile opm-spe9-4 opm-spe9-8"
for name in $runs; do
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    dir=$out/$name
    if [ -e "$dir" ]; then echo "opm-flow.sh: $name exists, skipped" >&2; continue; fi
    np=4
    case $name in *-8) np=8 ;; esac
    case $name in
        opm-spe1-*) case=SPE1CASE1; set -- --input "$build/spe1/SPE1CASE1.DATA" ;;
        *) case=SPE9_CP_SHORT
           set -- --input "$build/spe9/SPE9_CP_SHORT.DATA" --input "$build/spe9/SPE9.GRDECL" \
               --input "$build/spe9/PERMVALUES.DATA" --input "$build/spe9/TOPSVALUES.DATA" ;;
    esac
    set -- "$@" --preload "$build/libiotimes.so" \
        --mpirun-opt "-x OMP_NUM_THREADS=1 -x IOTIMES_WRITES -x IOTIMES_MATCH --output-filename ranklogs"
    case $name in *-otf2) set -- "$@" --otf2 ;; esac
    case $name in *-rankfile)
        # rank i on core (NP - 1 - i) mod cores: the placement changes, not the numbering. Two
        # ranks bound to one core are not "oversubscribed" for Open MPI, whose busy polling would
        # starve the peer: yield when idle, as it does in the unbound oversubscribed runs.
        "$rec/reverse-rankfile.sh" "$np" "$build/rankfile"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile --report-bindings --mca mpi_yield_when_idle 1" ;;
    esac
    echo "==> $name" >&2
    start=$(date +%s)
    if ! IOTIMES_WRITES=1 IOTIMES_MATCH=stdout \
        timeout 600 "$rec/record.sh" "$dir" "$np" "$@" -- $flow "$case.DATA" --threads-per-process=1 < /dev/null; then
        mv "$dir" "$build/failed-$name" 2>/dev/null || true
        echo "opm-flow.sh: $name failed" >&2; exit 1
    fi
    took=$(( $(date +%s) - start ))
    cd "$dir"
    case $name in *-rankfile) cp "$build/rankfile" rankfile ;; esac
    cp ranklogs/1/rank.0/stdout rank0.log
    rm -rf ranklogs
    [ -s stderr.txt ] || rm -f stderr.txt
    rm -f ./*.UNRST ./*.UNSMRY ./*.SMSPEC ./*.EGRID ./*.INIT ./*.RFT ./*.ESMRY ./*.OPM_PARALLEL ./*.h5
    grep -q 'End of simulation' rank0.log || { echo "opm-flow.sh: $name: no 'End of simulation' in rank0.log" >&2; exit 1; }
    {
        echo "package: libopm-simulators-bin $(dpkg-query -W -f='${Version}' libopm-simulators-bin 2>/dev/null)"
        echo "program: $flow $case.DATA --threads-per-process=1 (deck from OPM/opm-data, $data)"
        echo "recording took $took s (wall, including the tracer's output)"
    } >> versions.txt
    # Rank 0's writes only: the process whose last logged offset is rank0.log's size.
    mv iotimes.log iotimes-all.log
    size=$(stat -c %s rank0.log)
    pid=$(awk -v S="$size" '$3 == S { print $2 }' iotimes-all.log | sort -u | head -n 1)
    [ -n "$pid" ] || { echo "opm-flow.sh: $name: no process wrote $size bytes (rank0.log)" >&2; exit 1; }
    awk -v P="$pid" '$2 == P' iotimes-all.log > iotimes.log
    rm -f iotimes-all.log
    "$rec/expected-counts.sh" .
    "$rec/log-times.py" . rank0.log 'deck=^Reading deck file' 'grid=^Processing grid' \
        'partition=^Load balancing distributes' 'report=^Report step +[0-9]+/[0-9]+' \
        'end=End of simulation'
    python3 "$build/truth.py" rank0.log > expected/truth.txt
    if [ -e trace/traces.otf2 ]; then
        tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
    else
        tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
    fi
    echo "recorded $dir in $took s ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))" >&2
    cd "$root"
done
# Pairs whose compare verdict is known from the program: one deck under another tracer or
# another placement is similar; SPE1 (300 cells, 120 report steps) and SPE9 (9000 cells, 26
# wells, 21 report steps) at the same rank count differ.
cat > "$out/opm-pairs.txt" <<'PAIRS'
# A B expected
opm-spe1-4 opm-spe1-4-otf2 similar
opm-spe1-4 opm-spe1-4-rankfile similar
opm-spe1-4 opm-spe9-4 different
PAIRS
echo "opm-flow.sh: runs in $out; check them with: tools/record/check-heldout.py $out opm-..." >&2
