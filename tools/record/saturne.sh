#!/bin/bash
# Records Code_Saturne (the finite-volume CFD code of EDF, 6.0.2 as Debian ships it: `apt-get
# install -y code-saturne`) as held-out runs, kept OUTSIDE the repository and never used to tune
# anything (docs/corpus.md, "Held-out check"): Debian's solver binary /usr/lib/code_saturne/cs_solver,
# unchanged, on Open MPI, with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned
# tracelogic for Code_Saturne. Nothing is downloaded: the meshes are generated here. From the
# repository root:
#
#   tools/record/saturne.sh [OUT_ROOT [RUN...]]        (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT saturne-...  (one table)
#
# Runs already present are skipped, so it can be interrupted and rerun. A run's name says what it
# is: saturne-CASE-NP[-otf2][-rankfile], DUMPI unless `-otf2`, `-rankfile` under an Open MPI
# rankfile (the permutation of runs.sh's `rankfile`: the placement changes, not the numbering; kept
# as RUN/rankfile, stderr.txt has --report-bindings). Every CASE is a 3-D lid-driven cavity: a box
# of NX x NY x NZ hexahedra (x in [0,1], y in [0,1], z in [0, NZ/NX]) written here as a Gmsh 2.2
# file (cell id = i + NX*(j + NY*k)), its face y = 1 (group "1", zone "lid") a wall sliding at
# u = (1,0,0), the other faces (group "2", zone "walls") fixed walls; the fluid at rest with
# the GUI's default properties; 20 time steps of 0.05 s (constant time step), SIMPLEC, velocity by
# symmetric Gauss-Seidel, pressure by conjugate gradient preconditioned by algebraic multigrid
# (the defaults). The mesh is split by Code_Saturne's default partitioner, a Morton space-filling
# curve in the bounding box (this build has neither METIS nor SCOTCH); setup.xml asks it to write
# the partition (partition_output/domain_number_NP). CASE is:
#   cavity  24 x 24 x 3 = 1728 cells, laminar
#   box     30 x 20 x 4 = 2400 cells, laminar (the Morton split is a 2 x 2 x 2 block grid at 8)
#   keps    the cavity's mesh with the k-epsilon model (linear production; two more equations per
#           time step, k and epsilon)
# setup.xml is written by Code_Saturne's own GUI model (its Python package: XMLinit, then the
# mesh, the two boundary zones, the lid's velocity, the time steps, partition output; the
# turbulence model `off` except for keps), the mesh preprocessed by cs_preprocess into
# mesh_input. The solver runs as `cs_solver --mpi --trace` with OMP_NUM_THREADS=1 (the build uses
# OpenMP; two threads per rank on this machine made a 1-second run take minutes); --trace only
# prints "initializing" and "time step: N; t = T" to standard output, each line dated on the
# trace's clock by the iotimes shim (tools/record/iotimes.c, IOTIMES_STDOUT_LINES=1).
#
# A run's folder: command.txt, versions.txt, the inputs (setup.xml, mesh_input, the Gmsh mesh as
# MESH.msh.zst, preprocessor.log), the solver's own outputs (run_solver.log: rank 0's log;
# performance.log; timer_stats.csv: each time step's elapsed time, row 0 the set-up;
# residuals.csv; setup.log; partition_output/; stdout.txt: the --trace lines; iotimes*.log; the
# checkpoint/ and postprocessing/ folders are removed), the trace packed (dumpi.tar.zst or
# trace.tar.zst; the unpacked files are removed) and the truth in expected/, independently of
# tracelogic:
#   saturne-log.txt  from run_solver.log: the mesh, the partitioner's cells per domain, the log's
#                    histograms of ghost cells and of neighbouring domains per rank (min, max), the
#                    number of time steps and each step's solver iterations (the convergence table:
#                    N_iter per equation); from performance.log each solver's calls and iterations
#                    and the multigrid's levels; from partition_output/domain_number_NP and the
#                    mesh: each rank's cells, its face neighbours (shared faces: the standard halo,
#                    exchanged in every solver iteration) and its vertex neighbours (what the log
#                    counts as "neighboring domains"); the script stops if the computed ghost cells
#                    or neighbour counts differ from the log's histograms
#   log-times.tsv, log-calls.tsv  "initializing" and every "time step: N" dated on the trace's clock,
#                    and the MPI calls of all ranks between them (tools/record/log-times.py); the
#                    interval after "initializing" is the set-up, after the last step's line that
#                    step plus the final stage (checkpoint, post-processing, finalize)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
# and OUT_ROOT/saturne-pairs.txt lists pairs with their expected `compare` verdict (the format of
# check-heldout.py's pairs.txt; copy or link it as pairs.txt to check them).
#
# Needs code-saturne 6.0.2 (/usr/bin/python3 for its GUI model), Open MPI (4.1.4 tested), SST
# DUMPI (tools/record/build-dumpi.sh; DUMPI_PREFIX), the OTF2 tracer (tools/otf2-tracer/build.sh;
# OTF2_TRACER), otf2-print (apt: otf2-tools), gcc and zstd. Takes about 5 minutes on 2 cores, 4 of
# them the rankfile run: it binds two ranks to each core, where Open MPI's busy polling slows the
# solver about 130-fold (225 s instead of 1.8 s; the unbound runs oversubscribe, and Open MPI then
# yields). The messages are the same (same calls, sends and bytes up to a few bytes of text).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
cs=/usr/lib/code_saturne
{ [ -x $cs/cs_solver ] && [ -x $cs/cs_preprocess ]; } || { echo "saturne.sh: Code_Saturne is missing (apt-get install -y code-saturne)" >&2; exit 1; }

runs="saturne-cavity-4 saturne-cavity-4-rankfile saturne-cavity-8 saturne-cavity-8-otf2 \
saturne-box-8-otf2 saturne-keps-4"
select_runs saturne

build_dir saturne
fail() { echo "saturne.sh: $1" >&2; exit 1; }
steps=20
gcc -shared -fPIC -O2 -o "$build/libiotimes.so" "$rec/iotimes.c" -ldl || fail "building iotimes.c failed"

# The mesh: NX NY NZ on the command line, Gmsh 2.2 on stdout (see the top of this file).
cat > "$build/mesh.py" <<'EOF'
import sys
nx, ny, nz = (int(a) for a in sys.argv[1:4])
def nid(i, j, k): return 1 + i + (nx + 1) * (j + (ny + 1) * k)
w = sys.stdout.write
w("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
w('$PhysicalNames\n3\n2 1 "lid"\n2 2 "walls"\n3 3 "fluid"\n$EndPhysicalNames\n')
w("$Nodes\n%d\n" % ((nx + 1) * (ny + 1) * (nz + 1)))
for k in range(nz + 1):
    for j in range(ny + 1):
        for i in range(nx + 1):
            w("%d %.10g %.10g %.10g\n" % (nid(i, j, k), i / nx, j / ny, k / nx))
w("$EndNodes\n")
els = []
for k in range(nz):
    for j in range(ny):
        els.append((2, [nid(0, j, k), nid(0, j, k + 1), nid(0, j + 1, k + 1), nid(0, j + 1, k)]))
        els.append((2, [nid(nx, j, k), nid(nx, j + 1, k), nid(nx, j + 1, k + 1), nid(nx, j, k + 1)]))
for k in range(nz):
    for i in range(nx):
        els.append((2, [nid(i, 0, k), nid(i + 1, 0, k), nid(i + 1, 0, k + 1), nid(i, 0, k + 1)]))
        els.append((1, [nid(i, ny, k), nid(i, ny, k + 1), nid(i + 1, ny, k + 1), nid(i + 1, ny, k)]))
for j in range(ny):
    for i in range(nx):
        els.append((2, [nid(i, j, 0), nid(i, j + 1, 0), nid(i + 1, j + 1, 0), nid(i + 1, j, 0)]))
        els.append((2, [nid(i, j, nz), nid(i + 1, j, nz), nid(i + 1, j + 1, nz), nid(i, j + 1, nz)]))
for k in range(nz):
    for j in range(ny):
        for i in range(nx):
            els.append((3, [nid(i, j, k), nid(i + 1, j, k), nid(i + 1, j + 1, k), nid(i, j + 1, k),
                            nid(i, j, k + 1), nid(i + 1, j, k + 1), nid(i + 1, j + 1, k + 1),
                            nid(i, j + 1, k + 1)]))
w("$Elements\n%d\n" % len(els))
for n, (tag, nodes) in enumerate(els, 1):
    w("%d %d 2 %d %d %s\n" % (n, 5 if len(nodes) == 8 else 3, tag, tag, " ".join(map(str, nodes))))
w("$EndElements\n")
EOF

# setup.xml through Code_Saturne's GUI model: OUT MESH STEPS TURBULENCE.
cat > "$build/setup.py" <<'EOF'
import sys
from code_saturne import cs_package
from code_saturne.model.XMLengine import Case
from code_saturne.model.XMLinitialize import XMLinit
from code_saturne.model.SolutionDomainModel import SolutionDomainModel
from code_saturne.model.LocalizationModel import LocalizationModel, Zone
from code_saturne.model.Boundary import Boundary
from code_saturne.model.TimeStepModel import TimeStepModel
from code_saturne.model.TurbulenceModel import TurbulenceModel
from code_saturne.model.PerformanceTuningModel import PerformanceTuningModel
out, mesh, steps, turb = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
case = Case(package=cs_package.package(), module='code_saturne')
case['xmlfile'] = out
case.xmlCleanAllBlank(case.xmlRootNode())
XMLinit(case).initialize()
SolutionDomainModel(case).addMesh((mesh, None))
zones = LocalizationModel('BoundaryZone', case)
zones.addZone(Zone('BoundaryZone', case=case, label='lid', codeNumber=1, localization='1', nature='wall'))
zones.addZone(Zone('BoundaryZone', case=case, label='walls', codeNumber=2, localization='2', nature='wall'))
lid = Boundary('wall', 'lid', case)
lid.setVelocityChoice('on')
lid.setVelocities(1.0, 0.0, 0.0)
ts = TimeStepModel(case)
ts.setStopCriterion('iterations', steps)
ts.setTimeStep(0.05)
TurbulenceModel(case).setTurbulenceModel(turb)
PerformanceTuningModel(case).setPartitionOut('yes')
case.xmlSaveDocument()
EOF

# The truth (see the top of this file): NX NY NZ NP RUN_DIR, on stdout.
cat > "$build/truth.py" <<'EOF'
import collections, re, subprocess, sys
nx, ny, nz, np_ = (int(a) for a in sys.argv[1:5])
d = sys.argv[5]
log = open(d + "/run_solver.log", errors="replace").read().splitlines()
perf = open(d + "/performance.log", errors="replace").read().splitlines()
def fail(m): sys.exit("saturne.sh: truth: " + m)
print("# From run_solver.log, performance.log and partition_output/ (Code_Saturne's own outputs) and the generated mesh; saturne.sh.")
print("mesh: %d x %d x %d hexahedra (cell id = i + %d*(j + %d*k)), %d ranks" % (nx, ny, nz, nx, ny, np_))
def histogram(title):
    for n, l in enumerate(log):
        if title in l:
            v = [int(x.split("=")[1]) for x in log[n + 1:n + 6] if "value =" in x]
            return v[0], v[1]
    fail("no histogram " + title)
for n, l in enumerate(log):
    if l.startswith(" Partitioning by") or "Number of cells per domain" in l:
        print("log: " + l.strip())
    if "Number of cells per domain" in l:
        print("log:   " + log[n + 1].strip())
ghost = histogram("Histogram of the number of ghost cells per rank")
neigh = histogram("Histogram of the number of neighboring domains per rank")
print("log: ghost cells per rank min %d max %d; neighboring domains per rank min %d max %d" % (ghost + neigh))
dom = [int(x) - 1 for x in subprocess.run(
    ["/usr/lib/code_saturne/cs_io_dump", "-e", "--section", "cell:domain number",
     "%s/partition_output/domain_number_%d" % (d, np_)], capture_output=True, text=True, check=True).stdout.split()]
if len(dom) != nx * ny * nz or max(dom) != np_ - 1:
    fail("partition_output has %d cells, %d domains" % (len(dom), max(dom) + 1))
def c(i, j, k): return i + nx * (j + ny * k)
cells = collections.Counter(); face = collections.defaultdict(collections.Counter)
ghosts = collections.defaultdict(set); vert = collections.defaultdict(set); box = {}
for k in range(nz):
    for j in range(ny):
        for i in range(nx):
            r = dom[c(i, j, k)]; cells[r] += 1
            b = box.get(r, [i, i, j, j, k, k])
            box[r] = [min(b[0], i), max(b[1], i), min(b[2], j), max(b[3], j), min(b[4], k), max(b[5], k)]
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    for dk in (-1, 0, 1):
                        ii, jj, kk = i + di, j + dj, k + dk
                        if (di, dj, dk) == (0, 0, 0) or not (0 <= ii < nx and 0 <= jj < ny and 0 <= kk < nz):
                            continue
                        s = dom[c(ii, jj, kk)]
                        if s != r:
                            vert[r].add(s)
                            if abs(di) + abs(dj) + abs(dk) == 1:
                                face[r][s] += 1; ghosts[r].add(c(ii, jj, kk))
print("partition (partition_output/domain_number_%d):" % np_)
for r in range(np_):
    print("rank %d: %d cells, cell-index box i %d..%d j %d..%d k %d..%d, ghost cells %d" % ((r, cells[r]) + tuple(box[r]) + (len(ghosts[r]),)))
    print("  face neighbours (shared faces): " + " ".join("%d(%d)" % (s, face[r][s]) for s in sorted(face[r])))
    print("  vertex neighbours: " + " ".join(map(str, sorted(vert[r]))))
fe = sorted({(min(r, s), max(r, s)) for r in face for s in face[r]})
ve = sorted({(min(r, s), max(r, s)) for r in vert for s in vert[r]})
print("face-neighbour pairs (%d): %s" % (len(fe), " ".join("%d-%d" % p for p in fe)))
print("vertex-only pairs (%d): %s" % (len(ve) - len(fe), " ".join("%d-%d" % p for p in ve if p not in fe)))
g = (min(len(ghosts[r]) for r in range(np_)), max(len(ghosts[r]) for r in range(np_)))
v = (min(len(vert[r]) for r in range(np_)), max(len(vert[r]) for r in range(np_)))
if g != ghost or v != neigh:
    fail("computed ghost cells %s / vertex neighbours %s differ from the log's %s / %s" % (g, v, ghost, neigh))
print("check: ghost cells (face neighbours' cells) and vertex-neighbour counts match the log's histograms")
steps = []
for l in log:
    m = re.match(r"^ INSTANT\s+(\S+)\s+TIME STEP NUMBER\s+(\d+)", l)
    if m:
        steps.append((int(m.group(2)), float(m.group(1)), []))
    m = re.match(r"^c  ([A-Za-z_]+)\s+\S+\s+(\d+)\s", l)
    if m and steps:
        steps[-1][2].append("%s %s" % (m.group(1), m.group(2)))
print("time steps: %d (lines 'TIME STEP NUMBER' in run_solver.log)" % len(steps))
step = 0
for l in log:
    m = re.match(r"^ INSTANT\s+\S+\s+TIME STEP NUMBER\s+(\d+)", l)
    if m:
        step = int(m.group(1))
    if re.match(r"^ *(Write (intermediate|final) restart files|checkpoint at iteration|FINAL STAGE OF THE CALCULATION|END OF CALCULATION)", l):
        print("log section (in step %d): %s" % (step, l.strip()))
rows = [l.split(",") for l in open(d + "/timer_stats.csv").read().splitlines()]
head = [h.strip() for h in rows[0]]
for r in rows[1:]:
    v = dict(zip(head, (x.strip() for x in r)))
    extra = ["%s %.4f" % (h, float(v[h])) for h in ("mesh processing", "checkpoint/restart", "post-processing")
             if h in v and float(v[h]) > 0.001]
    print("timer_stats.csv: %s total %.4f s%s" % ("set-up (iteration 0)" if v["iteration"] == "0" else "step " + v["iteration"], float(v["total"]),
          (": " + ", ".join(extra)) if extra else ""))
for n, t, it in steps:
    print("step %d (t = %g): N_iter %s" % (n, t, ", ".join(it)))
for n, l in enumerate(perf):
    m = re.match(r'^Summary of resolutions for "(.*)"', l)
    if m:
        f = {}
        for x in perf[n + 1:]:
            if x.startswith("Summary of") or x.strip() in ("Multigrid:", "") and f or x.startswith("---"):
                break
            if ":" in x:
                a, b = x.split(":", 1); f[a.strip()] = b.strip()
        print("solver %s: %s%s, %s calls, iterations min %s max %s mean %s" % (
            m.group(1), f.get("Solver type"), " + " + f["Preconditioning"] if "Preconditioning" in f else "",
            f.get("Number of calls"), f.get("Minimum number of iterations"),
            f.get("Maximum number of iterations"), f.get("Mean number of iterations")))
    if "Number of coarse levels" in l or "Number of cycles" in l:
        print("multigrid: " + " ".join(l.split()) + " (mean min max)")
EOF

for name in $todo; do
    b=${name#saturne-}                 # CASE-NP[-otf2][-rankfile]
    case_=${b%%-*}
    np=${b#*-}; np=${np%%-*}
    case $case_ in
        cavity) dims="24 24 3"; turb=off ;;
        box) dims="30 20 4"; turb=off ;;
        keps) dims="24 24 3"; turb=k-epsilon-PL ;;
    esac
    # shellcheck disable=SC2086
    set -- $dims
    mesh=lid-$1x$2x$3.msh
    prep=$build/$case_
    if [ ! -e "$prep/mesh_input" ]; then
        mkdir -p "$prep"
        # shellcheck disable=SC2086  # NX NY NZ, three words
        python3 "$build/mesh.py" $dims > "$prep/$mesh"
        (cd "$prep" && $cs/cs_preprocess --reorient --log preprocessor.log "$mesh" > /dev/null) || fail "cs_preprocess failed on $mesh"
        PYTHONPATH=/usr/lib/python3/dist-packages/code_saturne /usr/bin/python3 "$build/setup.py" \
            "$prep/setup.xml" "$mesh" "$steps" "$turb" || fail "writing setup.xml failed"
    fi
    dir=$out/$name
    set -- --input "$prep/setup.xml" --input "$prep/mesh_input" --preload "$build/libiotimes.so" \
        --mpirun-opt "-x OMP_NUM_THREADS=1 -x IOTIMES_WRITES -x IOTIMES_MATCH -x IOTIMES_STDOUT_LINES"
    otf2=no
    case $name in *-otf2*) set -- "$@" --otf2; otf2=yes ;; esac
    case $name in *-rankfile)
        rankfile "$np" "$build/rankfile-$name"
        # record.sh splits an --mpirun-opt into words; Open MPI 4.1.4 rejects --rankfile=FILE.
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile-$name" --mpirun-opt --report-bindings ;;
    esac
    echo "==> $name" >&2
    current=$dir
    IOTIMES_WRITES=1 IOTIMES_MATCH=stdout IOTIMES_STDOUT_LINES=1 \
        "$rec/record.sh" "$dir" "$np" "$@" -- $cs/cs_solver --mpi --trace < /dev/null || fail "$name: record.sh failed"
    cd "$dir"
    grep -q 'END OF CALCULATION' run_solver.log || fail "$name: no 'END OF CALCULATION' in run_solver.log"
    [ "$(grep -c '^time step: ' stdout.txt)" = $steps ] || fail "$name: not $steps 'time step:' lines in stdout.txt"
    [ -s stderr.txt ] || rm -f stderr.txt
    rm -rf checkpoint postprocessing
    cp "$prep/preprocessor.log" .
    zstd -q -19 -o "$mesh.zst" "$prep/$mesh"
    case $name in *-rankfile) cp "$build/rankfile-$name" rankfile ;; esac
    {
        echo "package: code-saturne $(dpkg-query -W -f='${Version}' code-saturne 2>/dev/null)"
        echo "solver: $cs/cs_solver (Debian's binary), mesh $mesh ($dims cells) generated by saturne.sh, setup.xml by Code_Saturne's GUI model"
    } >> versions.txt
    mkdir -p expected
    # shellcheck disable=SC2086
    python3 "$build/truth.py" $dims "$np" . > expected/saturne-log.txt || fail "$name: the truth failed"
    "$rec/rank0-iotimes.sh" .
    "$rec/log-times.py" . stdout.txt 'init=^initializing' 'step=^time step: [0-9]+' || fail "$name: log-times.py failed"
    pack_run "$name" "$otf2"
done
# Pairs whose compare verdict is known from the runs: one case under two placements or tracers is
# similar; two meshes (other partition graph and message sizes) or two flow models (laminar, and
# k-epsilon's two more equations per step) are not.
cat > "$out/saturne-pairs.txt" <<'PAIRS'
# A B expected
saturne-cavity-4 saturne-cavity-4-rankfile similar
saturne-cavity-8 saturne-cavity-8-otf2 similar
saturne-cavity-8-otf2 saturne-box-8-otf2 different
saturne-cavity-4 saturne-keps-4 different
PAIRS
echo "saturne.sh: runs in $out; check them with: tools/record/check-heldout.py $out saturne-..." >&2
