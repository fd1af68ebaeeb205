#!/bin/sh
# Records Gerris (the adaptive-mesh flow solver of S. Popinet, 1.3.2 "20131206" as Debian ships
# it: `apt-get install -y gerris libgfs-dev`; libgfs-dev because gerris2D compiles the initial
# condition's expressions into a C module at start-up) as held-out runs, kept OUTSIDE the
# repository and never used to tune anything (docs/corpus.md, "Held-out check"): Debian's
# /usr/bin/gerris2D, unchanged, on Open MPI with SST DUMPI preloaded or with tools/otf2-tracer.
# Nothing is downloaded. From the repository root:
#
#   tools/record/gerris.sh [OUT_ROOT [RUN...]]     (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT gerris-...  (OUT_ROOT/gerris-pairs.txt lists pairs with
#                                                    their expected compare verdict)
#
# The case (written here as shear.gfs): the double shear layer of Bell, Colella & Glaz on the
# periodic unit square, U = tanh(30 (y + 1/4)) below y = 0 and tanh(30 (1/4 - y)) above,
# V = 0.05 sin(2 pi (x + 1/2)), incompressible Euler (no viscosity), Refine 6 (64 x 64 cells on
# the square), Time { iend = 100 }: 100 time steps. Parallel as the Gerris "parallel" tutorial
# does it: `gerris2D -s 1 shear.gfs > shear-split.gfs` splits every box in four and gives each new
# box its own process (pid = rank), then `mpirun -np N gerris2D shear-split.gfs`.
#   4 ranks: one periodic box split in four, a 2 x 2 periodic grid of boxes (each 32 x 32 cells).
#   8 ranks: two boxes side by side (a 2 x 1 periodic domain, the same shear layer, the
#            sine of period 1 twice along x) split in eight, a 4 x 2 periodic grid.
#   adapt:   4 ranks as above, plus AdaptVorticity { istep = 1 } { maxlevel = 7 minlevel = 4
#            cmax = 1e-2 }: the mesh is refined and coarsened every step, so the number of cells
#            per process and the boundary messages change from step to step.
# Which box is which process and which box touches which is in the split file (GfsBox lines
# "id = I pid = P ... x = X y = Y" and the GfsGEdge lines "B1 B2 direction"); expected/truth.txt
# lists them and the process graph they make (an edge per shared box face, periodic faces
# included), independently of tracelogic.
#
# What Gerris does in MPI (src/mpi_boundary.c, src/domain.c): each box face shared with a box of
# another process is a GfsBoundaryMpi; a boundary update (every variable, every multigrid level
# of the two Poisson projections per step) MPI_Isends the face's values (MPI_DOUBLE, tag
# (2^31-1)/4 * direction + box id) to the neighbour, then MPI_Recv's the neighbour's, then
# MPI_Waits its sends; when the face's cell count may differ (after adaptation) a 4-byte
# MPI_UNSIGNED count goes first. Reductions (time step, residual norms, cell counts of
# OutputBalance) are MPI_Allreduce over MPI_COMM_WORLD. Rank 0 writes the global outputs.
#
# Outputs of the run (only rank 0 writes them): steps.log (OutputTime every step: "step: I t: ..
# dt: .." for I = 0 .. 100, step 0 written before the first time step), balance.log
# (OutputBalance every 10 steps: cells per process min/avg/max), timing.log (OutputTiming at step
# 100: the timers and "Message passing summary n: N size: S bytes", the count and bytes of rank
# 0's own MPI_Isends of boundary data since the start, counted by Gerris itself in
# gts_range_add_value (&domain->mpi_messages, ...)).
# steps.log is dated on the trace's clock (CLOCK_MONOTONIC, as both tracers) by the iotimes shim
# (tools/record/iotimes.c, IOTIMES_MATCH=steps.log: Gerris fflushes an output file after each
# event) and tools/record/log-times.py: expected/log-times.tsv (every step line, seconds since the
# trace's first event) and expected/log-calls.tsv (the MPI calls of all ranks between consecutive
# step lines: the per-step loop body).
#
# Runs: gerris-4 (4 ranks, DUMPI), gerris-4-otf2 (the same with the OTF2 tracer),
# gerris-4-rankfile (4 ranks placed in reverse order on the cores by an Open MPI rankfile, kept as
# RUN/rankfile), gerris-8 (8 ranks), gerris-4-adapt (adaptive mesh, 4 ranks). A run's folder:
# command.txt, versions.txt, shear.gfs, shear-split.gfs, stdout.txt, stderr.txt, steps.log,
# balance.log, timing.log, iotimes.log, the trace (dumpi.tar.zst, or trace/ for OTF2) and
# expected/: the decoders' counts (expected-counts.sh), truth.txt (boxes, process graph, steps,
# Gerris's message summary against rank 0's MPI_Isend count and bytes in the decoder),
# log-times.tsv and log-calls.tsv.
#
# Needs gerris and libgfs-dev, gcc, Open MPI, SST DUMPI (DUMPI_PREFIX, default /opt/dumpi), the
# OTF2 tracer (OTF2_TRACER), otf2-print and zstd. Each run takes 3 to 15 s on 2 cores.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
gerris=/usr/bin/gerris2D
[ -x $gerris ] || { echo "gerris.sh: Gerris is missing (apt-get install -y gerris libgfs-dev)" >&2; exit 1; }
[ -f /usr/include/gfs.h ] || { echo "gerris.sh: libgfs-dev is missing (gerris2D compiles the initial condition)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d /tmp/gerris-build.XXXXXX)
trap 'rm -rf "$build"' EXIT
gcc -shared -fPIC -O2 -o "$build/libiotimes.so" "$rec/iotimes.c" -ldl

# shear.gfs: NBOX boxes side by side along x (1 or 2), periodic in x and y; ADAPT adds the
# vorticity criterion.
write_case() { # NBOX ADAPT
    if [ "$1" = 1 ]; then
        echo "1 2 GfsSimulation GfsBox GfsGEdge {} {"
    else
        echo "2 4 GfsSimulation GfsBox GfsGEdge {} {"
    fi
    cat <<'EOF'
  Time { iend = 100 }
  Refine 6
EOF
    [ "$2" = yes ] && echo "  AdaptVorticity { istep = 1 } { maxlevel = 7 minlevel = 4 cmax = 1e-2 }"
    cat <<'EOF'
  Init {} {
    U = (y <= 0. ? tanh(30.*(y + 0.25)) : tanh(30.*(0.25 - y)))
    V = 0.05*sin(2.*M_PI*(x + 0.5))
  }
  OutputTime { istep = 1 } steps.log
  OutputBalance { istep = 10 } balance.log
  OutputTiming { start = end } timing.log
}
EOF
    if [ "$1" = 1 ]; then
        printf 'GfsBox {}\n1 1 right\n1 1 top\n'
    else
        printf 'GfsBox {}\nGfsBox {}\n1 2 right\n2 1 right\n1 1 top\n2 2 top\n'
    fi
}

# The truth, independently of tracelogic: boxes and process graph from the split file, the steps
# from steps.log, Gerris's own message summary against rank 0's MPI_Isends in the decoder.
cat > "$build/truth.py" <<'EOF'
import collections, glob, os, re, subprocess, sys
d, d2a = sys.argv[1], sys.argv[2]
split = open(os.path.join(d, "shear-split.gfs")).read()
boxes = {}
for m in re.finditer(r"^GfsBox \{ id = (\d+) pid = (\d+) size = \d+ x = (\S+) y = (\S+)", split, re.M):
    boxes[int(m.group(1))] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
edges = [(int(a), int(b), w) for a, b, w in re.findall(r"^(\d+) (\d+) (right|left|top|bottom)$", split, re.M)]
xs = sorted({x for _, x, _ in boxes.values()}); ys = sorted({y for _, _, y in boxes.values()})
print("boxes: %d (%d x %d grid, periodic in x and y), one per process" % (len(boxes), len(xs), len(ys)))
for b, (p, x, y) in sorted(boxes.items(), key=lambda kv: kv[1][0]):
    print("  rank %d: box %d centre (%g, %g) grid column %d row %d" % (p, b, x, y, xs.index(x), ys.index(y)))
print("grid rows (top row first, ranks left to right):")
for y in reversed(ys):
    print("  " + " ".join("%d" % p for p, x, yy in sorted(boxes.values(), key=lambda v: v[1]) if yy == y))
faces = collections.Counter()
for a, b, w in edges:
    pa, pb = boxes[a][0], boxes[b][0]
    if pa != pb:
        faces[tuple(sorted((pa, pb)))] += 1
print("process graph (an undirected edge per pair of ranks sharing box faces; faces): %d edges" % len(faces))
for (a, b), n in sorted(faces.items()):
    print("  %d - %d  %d face%s" % (a, b, n, "" if n == 1 else "s"))
deg = collections.Counter()
for a, b in faces:
    deg[a] += 1; deg[b] += 1
print("distinct neighbours per rank: " + " ".join("%d:%d" % kv for kv in sorted(deg.items())))
steps = re.findall(r"^step: +(\d+)", open(os.path.join(d, "steps.log")).read(), re.M)
print("steps.log: %d lines, steps %s .. %s (%d time steps)" % (len(steps), steps[0], steps[-1], int(steps[-1]) - int(steps[0])))
bal = re.findall(r"domain +min: +(\d+) avg: +(\d+) .*max: +(\d+)", open(os.path.join(d, "balance.log")).read())
print("cells per process (OutputBalance every 10 steps, min/avg/max): " + " ".join("%s/%s/%s" % b for b in bal))
tim = open(os.path.join(d, "timing.log")).read()
m = re.search(r"Message passing summary\s+n: +(\d+) size: +(\d+) bytes", tim)
print("Gerris's message summary (rank 0's MPI_Isends of boundary data): n %s, %s bytes" % m.groups())
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if bins:
    txt = subprocess.run([d2a, bins[0]], check=True, capture_output=True, text=True).stdout
    n = nbytes = 0
    for blk in re.split(r"\n(?=MPI_\w+ entering)", txt):
        if blk.startswith("MPI_Isend entering"):
            c = int(re.search(r"int count=(\d+)", blk).group(1))
            t = re.search(r"MPI_Datatype datatype=\d+ \((\w+)\)", blk).group(1)
            n += 1; nbytes += c * {"MPI_DOUBLE": 8, "MPI_UNSIGNED": 4}.get(t, 0)
    print("dumpi2ascii, rank 0: MPI_Isend %d calls, %d bytes (MPI_DOUBLE 8, MPI_UNSIGNED 4)" % (n, nbytes))
EOF

runs="gerris-4 gerris-4-otf2 gerris-4-rankfile gerris-8 gerris-4-adapt"
for name in $runs; do
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    dir=$out/$name
    if [ -e "$dir" ]; then echo "gerris.sh: $name exists, skipped" >&2; continue; fi
    np=4; nbox=1; adapt=no
    case $name in gerris-8*) np=8; nbox=2 ;; esac
    case $name in *-adapt) adapt=yes ;; esac
    rm -f "$build/shear.gfs" "$build/shear-split.gfs"
    write_case $nbox $adapt > "$build/shear.gfs"
    (cd "$build" && $gerris -s 1 shear.gfs > shear-split.gfs)
    set -- --input "$build/shear.gfs" --input "$build/shear-split.gfs" \
        --preload "$build/libiotimes.so" --mpirun-opt "-x IOTIMES_MATCH"
    case $name in *-otf2) set -- "$@" --otf2 ;; esac
    case $name in *-rankfile)
        # rank i on core (NP - 1 - i) mod cores: the placement changes, not the numbering. Bound
        # two to a core, Open MPI's busy polling would starve the peer (examl.sh): yield when idle.
        "$rec/reverse-rankfile.sh" "$np" "$build/rankfile"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile" --mpirun-opt --report-bindings \
            --mpirun-opt "--mca mpi_yield_when_idle 1" ;;
    esac
    echo "==> $name" >&2
    if ! IOTIMES_MATCH=steps.log timeout 300 "$rec/record.sh" "$dir" "$np" "$@" -- $gerris shear-split.gfs < /dev/null; then
        mv "$dir" "$build/failed-$name" 2>/dev/null || true
        echo "gerris.sh: $name failed" >&2; exit 1
    fi
    case $name in *-rankfile) cp "$build/rankfile" "$dir/rankfile" ;; esac
    {
        echo "package: gerris $(dpkg-query -W -f='${Version}' gerris 2>/dev/null), libgfs-dev $(dpkg-query -W -f='${Version}' libgfs-dev 2>/dev/null)"
        echo "program: $gerris shear-split.gfs (shear.gfs written by tools/record/gerris.sh, split by $gerris -s 1)"
    } >> "$dir/versions.txt"
    grep -q '^step: *100 ' "$dir/steps.log" || { echo "gerris.sh: $name: no step 100 in steps.log" >&2; exit 1; }
    grep -q 'Message passing summary' "$dir/timing.log" || { echo "gerris.sh: $name: no message summary in timing.log" >&2; exit 1; }
    "$rec/expected-counts.sh" "$dir"
    python3 "$build/truth.py" "$dir" "$d2a" > "$dir/expected/truth.txt"
    python3 "$rec/log-times.py" "$dir" steps.log 'step=^step: +[0-9]+'
    if [ -d "$dir/trace" ]; then :; else
        (cd "$dir" && tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
    fi
    echo "recorded $dir ($(du -sh "$dir" | cut -f1))" >&2
done
# Pairs whose compare verdict is known from the program: one case under another tracer or
# another placement is similar; the adaptive mesh changes the messages of every step (sizes,
# the extra 4-byte counts, the adaptation's reductions): different.
cat > "$out/gerris-pairs.txt" <<'PAIRS'
# A B expected
gerris-4 gerris-4-otf2 similar
gerris-4 gerris-4-rankfile similar
gerris-4 gerris-4-adapt different
PAIRS
echo "gerris.sh: runs in $out; check them with: tools/record/check-heldout.py $out gerris-..." >&2
