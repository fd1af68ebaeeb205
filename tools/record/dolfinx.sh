#!/bin/bash
# Records FEniCSx/DOLFINx (the finite-element library, 0.5.2 as Debian ships it: `apt-get install
# -y python3-dolfinx`, with PETSc 3.18 and PT-Scotch 7.0) as held-out runs, kept OUTSIDE the
# repository and never used to tune anything (docs/corpus.md, "Held-out check"): Debian's
# python3-dolfinx, unchanged, running a Python script written here (heat.py), on Open MPI, with SST
# DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for DOLFINx. Nothing is
# downloaded: the mesh is DOLFINx's own unit square or cube. From the repository root:
#
#   tools/record/dolfinx.sh [OUT_ROOT [RUN...]]        (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT dolfinx-...  (one table)
#
# Runs already present are skipped, so it can be interrupted and rerun. A run's name says what it
# is: dolfinx-heatDIMd-NP[-otf2][-rankfile], DUMPI unless `-otf2`, `-rankfile` under an Open MPI
# rankfile (the permutation of runs.sh's `rankfile`: the placement changes, not the numbering;
# kept as RUN/rankfile, stderr.txt has --report-bindings). Every run solves the heat equation
# u_t = lap u + f (f a Gaussian bump at the centre, u = 0 on the boundary, u = 0 at t = 0) with P1
# Lagrange elements and backward Euler, 5 time steps of 0.01: heat2d on
# create_unit_square(32, 32) (2,048 triangles, 1,089 dofs), heat3d on create_unit_cube(8, 8, 8)
# (3,072 tetrahedra, 729 dofs). DOLFINx's default partitioner (PT-Scotch here: this build has
# neither ParMETIS nor KaHIP) splits the cells, so each rank's neighbours form an irregular graph,
# and one that differs from run to run (PT-Scotch's threads make it nondeterministic: two runs of
# one command can give two graphs; every run's truth is its own). The matrix (mass + dt stiffness,
# Dirichlet rows) is assembled once; each step assembles the right-hand side (PETSc ghost update:
# VecGhostUpdate, ADD, REVERSE), solves with PETSc's CG preconditioned by Jacobi (rtol 1e-8,
# -ksp_monitor), and copies the solution (DOLFINx's scatter_forward). DOLFINx's own exchanges use
# MPI-3 neighbourhood collectives on distributed-graph communicators (MPI_Dist_graph_create_adjacent,
# MPI_Neighbor_alltoall(v)), which neither SST DUMPI 13 nor tools/otf2-tracer records: the traces
# hold PETSc's point-to-point scatters (persistent requests, MPI_Startall), the mesh distribution's
# and PT-Scotch's messages and the collectives. PT-Scotch makes MPI calls from a second thread
# while it partitions (DUMPI marks them `thread 1`); the OTF2 tracer is not thread-safe, and an OTF2
# run may come out unreadable (otf2-print: "This is no chunk header"): the run then fails and is
# recorded again by a rerun.
#
# heat.py writes its stages to dolfinx.log (rank 0 only), one line each, dated on the trace's clock
# by the iotimes shim (tools/record/iotimes.c, IOTIMES_WRITES=1 IOTIMES_MATCH=dolfinx.log):
# "mesh: start", "mesh: done, N cells", "space: done, N dofs", "assemble matrix: start|done",
# per step "time step N: assemble", "time step N: solve", one "ksp iteration K residual R" per
# CG iteration (a Python KSP monitor, K = 0 .. iterations), "time step N: done, N KSP iterations,
# reason R", "output: start", "output: integral of u ...", "end". Each rank writes rank-NNNN.txt
# after the solves (undated): owned and ghost cells, the ranks owning its ghost cells, dofs and
# vertices (DOLFINx's index maps), the owners of the off-process columns of its rows of the PETSc
# matrix, and its KSP iteration counts.
#
# A run's folder: command.txt, versions.txt, heat.py, dolfinx.log, rank-NNNN.txt, stdout.txt
# (PETSc's -ksp_monitor lines), iotimes.log, the trace packed (dumpi.tar.zst or trace.tar.zst; the
# unpacked files are removed) and the truth in expected/, independently of tracelogic:
#   dolfinx-truth.txt  each rank's own lines; the neighbour graph (the dof index map's ghost
#                   owners, checked symmetric) with its edges and degrees; the stages; the KSP
#                   iterations per solve (the monitor lines = every rank's KSPGetIterationNumber);
#                   from the decoder, the sending pairs (world ranks: communicators are followed
#                   through MPI_Comm_dup and PT-Scotch's MPI_Comm_split), over the run and in the
#                   solves; the script stops unless the neighbour exchanges in the solves (PETSc's
#                   persistent-request scatters) are exactly the neighbour graph's edges
#   log-times.tsv, log-calls.tsv  the lines of dolfinx.log dated on the trace's clock, and the MPI
#                   calls of all ranks between them (tools/record/log-times.py): after "mesh:
#                   start" the mesh creation and partitioning, after "assemble matrix: start" the
#                   assembly, after each "ksp iteration K" one CG iteration
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
# and OUT_ROOT/dolfinx-pairs.txt lists pairs with their expected `compare` verdict (the format of
# check-heldout.py's pairs.txt; copy or link it as pairs.txt to check them).
#
# Needs python3-dolfinx 0.5.2 (/usr/bin/python3; FFCx compiles the forms with gcc on first use,
# into ~/.cache/fenics: a serial untraced run warms it first), Open MPI (4.1.4 tested), SST DUMPI
# (tools/record/build-dumpi.sh; DUMPI_PREFIX), the OTF2 tracer (tools/otf2-tracer/build.sh;
# OTF2_TRACER), otf2-print (apt: otf2-tools), gcc and zstd. Takes about a minute on 2 cores.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
py=/usr/bin/python3
$py -c 'import dolfinx' 2> /dev/null || { echo "dolfinx.sh: DOLFINx is missing (apt-get install -y python3-dolfinx)" >&2; exit 1; }

runs="dolfinx-heat2d-4 dolfinx-heat2d-4-rankfile dolfinx-heat2d-6 dolfinx-heat2d-6-otf2 dolfinx-heat3d-4"
select_runs dolfinx

build_dir dolfinx
fail() { echo "dolfinx.sh: $1" >&2; exit 1; }
steps=5
gcc -shared -fPIC -O2 -o "$build/libiotimes.so" "$rec/iotimes.c" -ldl || fail "building iotimes.c failed"

# The simulation (see the top of this file): python3 heat.py DIM N STEPS.
cat > "$build/heat.py" <<'PY'
# dolfinx.sh (tracelogic tools/record): P1 heat equation on a distributed unit square or cube.
import sys, time
from mpi4py import MPI
from petsc4py import PETSc
import numpy as np
import ufl
import dolfinx, dolfinx.fem.petsc
from dolfinx import fem, mesh

DIM, N, STEPS = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
DT = 0.01
comm = MPI.COMM_WORLD
rank = comm.rank
log = open("dolfinx.log", "w", buffering=1) if rank == 0 else None
def stage(s):
    if log: log.write(s + "\n")
stage("mesh: start")
if DIM == 2:
    msh = mesh.create_unit_square(comm, N, N)
else:
    msh = mesh.create_unit_cube(comm, N, N, N)
tdim = msh.topology.dim
cmap = msh.topology.index_map(tdim)
stage("mesh: done, %d cells" % cmap.size_global)
V = fem.FunctionSpace(msh, ("Lagrange", 1))
im = V.dofmap.index_map
stage("space: done, %d dofs" % im.size_global)
msh.topology.create_connectivity(tdim - 1, tdim)
bfacets = mesh.exterior_facet_indices(msh.topology)
bdofs = fem.locate_dofs_topological(V, tdim - 1, bfacets)
bc = fem.dirichletbc(PETSc.ScalarType(0), bdofs, V)
u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
un = fem.Function(V)
x = ufl.SpatialCoordinate(msh)
f = 10.0 * ufl.exp(-50.0 * sum((x[i] - 0.5) ** 2 for i in range(tdim)))
a = fem.form(u * v * ufl.dx + DT * ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx)
L = fem.form((un + DT * f) * v * ufl.dx)
stage("assemble matrix: start")
A = dolfinx.fem.petsc.assemble_matrix(a, bcs=[bc])
A.assemble()
b = dolfinx.fem.petsc.create_vector(L)
stage("assemble matrix: done")
ksp = PETSc.KSP().create(comm)
ksp.setOperators(A)
ksp.setType("cg")
ksp.getPC().setType("jacobi")
ksp.setTolerances(rtol=1e-8)
ksp.setOptionsPrefix("")
opts = PETSc.Options()
opts["ksp_monitor"] = None
ksp.setFromOptions()
def monitor(k, it, rnorm):
    if log: log.write("ksp iteration %d residual %.6e\n" % (it, rnorm))
ksp.setMonitor(monitor)
uh = fem.Function(V)
its = []
for n in range(1, STEPS + 1):
    stage("time step %d: assemble" % n)
    with b.localForm() as bl:
        bl.set(0)
    dolfinx.fem.petsc.assemble_vector(b, L)
    dolfinx.fem.petsc.apply_lifting(b, [a], [[bc]])
    b.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
    dolfinx.fem.petsc.set_bc(b, [bc])
    stage("time step %d: solve" % n)
    ksp.solve(b, uh.vector)
    uh.x.scatter_forward()
    its.append(ksp.getIterationNumber())
    stage("time step %d: done, %d KSP iterations, reason %d" % (n, its[-1], ksp.getConvergedReason()))
    un.x.array[:] = uh.x.array
stage("output: start")
total = comm.allreduce(fem.assemble_scalar(fem.form(uh * ufl.dx)), op=MPI.SUM)
stage("output: integral of u %.10e" % total)
# The truth of this rank (not dated): cells, dofs, neighbours from the index maps and the matrix.
lo, hi = A.getOwnershipRange()
ranges = A.getOwnershipRanges()
cols = set()
for row in range(lo, hi):
    c, _ = A.getRow(row)
    cols.update(int(j) for j in c if j < lo or j >= hi)
mat_src = sorted(set(int(np.searchsorted(ranges, j, side="right") - 1) for j in cols))
with open("rank-%04d.txt" % rank, "w") as t:
    t.write("rank %d of %d\n" % (rank, comm.size))
    t.write("cells owned %d ghost %d\n" % (cmap.size_local, cmap.num_ghosts))
    t.write("cell ghost owners %s\n" % " ".join(map(str, sorted(set(cmap.owners.tolist())))))
    t.write("dofs owned %d ghost %d range %d %d\n" % (im.size_local, im.num_ghosts, lo, hi))
    t.write("dof ghost owners %s\n" % " ".join(map(str, sorted(set(im.owners.tolist())))))
    t.write("matrix off-process column owners %s (%d columns)\n" % (" ".join(map(str, mat_src)), len(cols)))
    vmap = msh.topology.index_map(0)
    t.write("vertex ghost owners %s\n" % " ".join(map(str, sorted(set(vmap.owners.tolist())))))
    t.write("ksp iterations %s\n" % " ".join(map(str, its)))
stage("end")
PY

# The truth (see the top of this file): RUN_DIR NP, on stdout.
cat > "$build/truth.py" <<'PY'
import collections, glob, os, re, subprocess, sys, tempfile
d, np_ = sys.argv[1], int(sys.argv[2])
def fail(m): sys.exit("dolfinx.sh: truth: " + m)
print("# From the program's own files (rank-NNNN.txt, dolfinx.log, stdout.txt) and the tracer's decoder; dolfinx.sh.")
# 1. Each rank's own view: cells, dofs, neighbours from DOLFINx's index maps and PETSc's matrix.
own = {}; mat = {}; its = None
for r in range(np_):
    path = os.path.join(d, "rank-%04d.txt" % r)
    if not os.path.exists(path):
        fail("no " + path)
    t = open(path).read()
    def ranks(key):
        m = re.search("^" + key + r" ?([\d ]*)", t, re.M)
        return sorted(int(x) for x in m.group(1).split())
    own[r] = ranks("dof ghost owners"); mat[r] = ranks("matrix off-process column owners")
    k = [int(x) for x in re.search(r"^ksp iterations (.*)$", t, re.M).group(1).split()]
    if its is None: its = k
    elif k != its: fail("rank %d reports other KSP iterations %s than rank 0 %s" % (r, k, its))
    for l in t.splitlines()[1:-1]:
        print("rank %d: %s" % (r, l))
edges = set()
for r in own:
    for s in own[r]:
        if r not in own[s]:
            fail("rank %d has ghosts owned by %d, not the other way round" % (r, s))
        edges.add((min(r, s), max(r, s)))
for r in mat:
    if mat[r] != own[r]:
        print("note: rank %d: matrix column owners %s differ from dof ghost owners %s" % (r, mat[r], own[r]))
deg = sorted(len(own[r]) for r in own)
print("neighbour graph (dof index map's ghost owners, symmetric): %d ranks, %d edges: %s; degrees %s" % (
    np_, len(edges), " ".join("%d-%d" % e for e in sorted(edges)), deg))
# 2. The stages and KSP iterations from dolfinx.log (rank 0's lines; a Python KSP monitor).
log = open(os.path.join(d, "dolfinx.log")).read().splitlines()
solves = []; n = None
for l in log:
    if re.match(r"^time step \d+: solve$", l): n = 0
    elif l.startswith("ksp iteration "): n += 1
    elif re.match(r"^time step \d+: done", l): solves.append(n - 1); n = None
    if not l.startswith("ksp iteration "):
        print("dolfinx.log: " + l)
if solves != its:
    fail("dolfinx.log's monitor lines give %s iterations, the ranks %s" % (solves, its))
print("KSP (CG, Jacobi) iterations per solve: %s, %d in all over %d solves (monitor lines in dolfinx.log = KSPGetIterationNumber)" % (
    " ".join(map(str, its)), sum(its), len(its)))
mon = sum(1 for l in open(os.path.join(d, "stdout.txt"), errors="replace") if "KSP Residual norm" in l)
print("stdout.txt: %d -ksp_monitor lines (iterations + 1 per solve)" % mon)
# 3. The point-to-point sends in the trace, by (sender, receiver) world rank, over the whole run and
# in the solves (from the first "time step 1: solve" to "output: start", dated by log-times.py).
times = {}
for l in open(os.path.join(d, "expected", "log-times.tsv")):
    f = l.rstrip("\n").split("\t")
    if len(f) == 5 and f[0] not in ("name",):
        times.setdefault(f[2], float(f[4]))
t_solve = times["time step 1: solve"]; t_out = times["output: start"]
sends = []  # (time s, src, dst, thread)
threads = collections.Counter()
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if bins:
    d2a = os.environ.get("DUMPI2ASCII", "/opt/dumpi/bin/dumpi2ascii")
    recs = []
    for r, path in enumerate(bins):
        txt = subprocess.run([d2a, path], check=True, capture_output=True, text=True).stdout
        rr = []; cur = None
        for l in txt.splitlines():
            m = re.match(r"^(MPI_\w+) entering at walltime ([\d.]+), .* in thread (\d+)\.", l)
            if m:
                cur = {"fn": m.group(1), "t": float(m.group(2)), "th": int(m.group(3))}; continue
            if cur is None: continue
            if re.match(r"^MPI_\w+ returning", l):
                rr.append(cur); threads[(r, cur["th"])] += 1; cur = None; continue
            m = re.match(r"^\S+(?: \S+)? (\w+)(?:\[\d+\])?=(.*)$", l)
            if m:
                v = m.group(2)
                cur[m.group(1)] = v if m.group(1) == "requests" else (v.split() or [""])[0]
        recs.append(rr)
    # Communicators: the k-th MPI_Comm_split of every rank is one collective call (PT-Scotch splits
    # MPI_COMM_WORLD's dups into halves when it folds the graph); its groups order by (key, rank).
    splits = [[x for x in rr if x["fn"] == "MPI_Comm_split"] for rr in recs]
    if len(set(map(len, splits))) != 1:
        fail("the ranks make different numbers of MPI_Comm_split calls")
    split_map = {}
    for k in range(len(splits[0])):
        groups = collections.defaultdict(list)
        for r in range(np_):
            groups[splits[r][k]["color"]].append((int(splits[r][k]["key"]), r))
        for c, g in groups.items():
            members = [w for _, w in sorted(g)]
            for w in members:
                split_map[(w, k)] = members
    for r, rr in enumerate(recs):
        comms = {"2": list(range(np_))}; pers = {}; nsplit = 0
        for cur in rr:
            fn = cur["fn"]
            if fn in ("MPI_Comm_create", "MPI_Intercomm_create", "MPI_Cart_create", "MPI_Graph_create", "MPI_Comm_create_group"):
                fail("rank %d calls %s, not followed here" % (r, fn))
            if fn == "MPI_Comm_split":
                comms[cur["newcomm"]] = split_map[(r, nsplit)]; nsplit += 1
            elif fn == "MPI_Comm_dup":
                comms[cur["newcomm"]] = comms.get(cur["oldcomm"])
            def world(dest):
                g = comms.get(cur.get("comm"))
                if g is None:
                    fail("rank %d: %s on an unknown communicator %s" % (r, fn, cur.get("comm")))
                return g[dest]
            if fn in ("MPI_Send_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Bsend_init"):
                pers[cur["request"].strip("[]")] = world(int(cur["dest"])) if int(cur["dest"]) >= 0 else -1
            elif fn in ("MPI_Start", "MPI_Startall"):
                for h in re.findall(r"\d+", cur.get("requests", cur.get("request", ""))):
                    if h in pers and pers[h] >= 0:
                        sends.append((cur["t"], r, pers[h], "persistent"))
            elif fn in ("MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Rsend", "MPI_Irsend",
                        "MPI_Bsend", "MPI_Ibsend", "MPI_Sendrecv", "MPI_Sendrecv_replace"):
                if int(cur["dest"]) >= 0:
                    sends.append((cur["t"], r, world(int(cur["dest"])), fn))
    print("dumpi2ascii: MPI_Comm_split groups (world ranks): %s" % " ".join(sorted({",".join(map(str, g)) for g in split_map.values()})))
    other = {k: v for k, v in threads.items() if k[1] != 0}
    print("dumpi2ascii: MPI calls per (rank, thread) off the main thread: %s (PT-Scotch's threads, during the mesh partitioning)" % (
        " ".join("%d/%d:%d" % (k[0], k[1], v) for k, v in sorted(other.items())) or "none"))
    decoder = "dumpi2ascii"
else:
    anchor = os.path.join(d, "trace", "traces.otf2"); tmp = None
    if not os.path.exists(anchor):
        tmp = tempfile.TemporaryDirectory()
        subprocess.run('zstd -dc "%s" | tar xf - -C "%s"' % (os.path.join(d, "trace.tar.zst"), tmp.name), shell=True, check=True)
        anchor = glob.glob(os.path.join(tmp.name, "**", "traces.otf2"), recursive=True)[0]
    p = subprocess.run(["otf2-print", anchor], capture_output=True, text=True)
    if "ERROR" in p.stdout + p.stderr:
        fail("otf2-print reports an error: the trace is damaged")
    # Peers are ranks of the event's communicator: only MPI_COMM_WORLD's dups (checked on DUMPI
    # runs; PT-Scotch's split halves make the set-up's peers unreliable here, not the solves').
    for m in re.finditer(r"^(MPI_I?SEND)\s+(\d+)\s+(\d+)\s+Receiver: (\d+)", p.stdout, re.M):
        sends.append((int(m.group(3)) / 1e9, int(m.group(2)), int(m.group(4)), m.group(1)))
    decoder = "otf2-print"
def pairs(sel):
    c = collections.Counter((s, t) for _, s, t, _ in sel)
    return c, " ".join("%d->%d:%d" % (a, b, c[(a, b)]) for a, b in sorted(c)) or "none"
# The neighbour exchanges are PETSc's vector scatters (MatMult's and the ghost update's), started
# from persistent requests (DUMPI: MPI_Startall; OTF2: MpiIsend events); the other sends in the
# solves are blocking MPI_Send pairs (1 integer, then N) along a tree towards rank 0, on a PETSc
# communicator (PETSc's object garbage collection, petsc4py's, presumably): not neighbour exchanges.
exch = "persistent" if bins else "MPI_ISEND"
c_all, txt_all = pairs(sends)
win = [x for x in sends if t_solve <= x[0] < t_out]
c_solve, txt_solve = pairs([x for x in win if x[3] == exch])
c_other, txt_other = pairs([x for x in win if x[3] != exch])
print("%s sending pairs over the whole run (world ranks, sends): %s" % (decoder, txt_all))
print("%s neighbour-exchange sends (%s) in the solves (time step 1: solve .. output: start): %s" % (decoder, exch, txt_solve))
print("%s other sends in the solves (blocking MPI_Send of 1 then N integers on a PETSc communicator, a tree towards rank 0: not neighbour exchanges): %s" % (decoder, txt_other))
und = {(min(a, b), max(a, b)) for a, b in c_all if a != b}
solve = {(min(a, b), max(a, b)) for a, b in c_solve if a != b}
print("undirected graph of all point-to-point sends: %d edges: %s%s" % (len(und), " ".join("%d-%d" % e for e in sorted(und)),
      "" if und == edges else " (more than the neighbour graph: the mesh distribution's, the partitioner's and the MPI_Send trees)"))
if solve != edges:
    fail("the neighbour-exchange sends in the solves %s differ from the neighbour graph %s" % (sorted(solve), sorted(edges)))
print("check: the neighbour-exchange sends in the solves are exactly the neighbour graph's edges, both directions")
per = collections.Counter(c_solve.values())
print("neighbour-exchange sends per directed edge in the solves: %s (MatMult's scatter: one per CG iteration, %d in all, plus one initial residual per solve started from the previous step's solution)" % (
    " ".join("%d x %d edges" % (k, v) for k, v in sorted(per.items())), sum(its)))
PY

# Warm FFCx's cache (the forms of both cell types), so that no traced run compiles.
mkdir -p "$build/warm"
for dim in 2 3; do
    (cd "$build/warm" && OMP_NUM_THREADS=1 $py "$build/heat.py" $dim 2 1 > /dev/null 2>&1) || fail "heat.py failed (untraced, serial)"
done

for name in $todo; do
    b=${name#dolfinx-heat}               # DIMd-NP[-otf2][-rankfile]
    dim=${b%%d-*}
    np=${b#*d-}; np=${np%%-*}
    case $dim in 2) n=32 ;; 3) n=8 ;; *) fail "$name: no dimension $dim" ;; esac
    dir=$out/$name
    set -- --input "$build/heat.py" --preload "$build/libiotimes.so" \
        --mpirun-opt "-x OMP_NUM_THREADS=1 -x IOTIMES_WRITES -x IOTIMES_MATCH"
    otf2=no
    case $name in *-otf2*) set -- "$@" --otf2; otf2=yes ;; esac
    case $name in *-rankfile)
        rankfile "$np" "$build/rankfile-$name"
        # record.sh splits an --mpirun-opt into words; Open MPI 4.1.4 rejects --rankfile=FILE.
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile-$name" --mpirun-opt --report-bindings ;;
    esac
    echo "==> $name" >&2
    current=$dir
    IOTIMES_WRITES=1 IOTIMES_MATCH=dolfinx.log \
        "$rec/record.sh" "$dir" "$np" "$@" -- $py heat.py "$dim" $n $steps < /dev/null || fail "$name: record.sh failed"
    cd "$dir"
    grep -q '^end$' dolfinx.log || fail "$name: no 'end' in dolfinx.log"
    [ "$(grep -c '^time step [0-9]*: done' dolfinx.log)" = $steps ] || fail "$name: not $steps 'time step N: done' lines in dolfinx.log"
    if [ $otf2 = yes ] && otf2-print trace/traces.otf2 2>&1 > /dev/null | grep -q .; then
        fail "$name: otf2-print cannot read the trace (the OTF2 tracer and PT-Scotch's threads); rerun"
    fi
    [ -s stderr.txt ] || rm -f stderr.txt
    case $name in *-rankfile) cp "$build/rankfile-$name" rankfile ;; esac
    {
        echo "packages: $(dpkg-query -W -f='${Package} ${Version}; ' python3-dolfinx libpetsc-real3.18 libptscotch-7.0 2>/dev/null)"
        echo "program: /usr/bin/python3 heat.py $dim $n $steps (written by dolfinx.sh), DOLFINx $($py -c 'import dolfinx; print(dolfinx.__version__)')"
    } >> versions.txt
    mkdir -p expected
    "$rec/log-times.py" . dolfinx.log 'mesh=^mesh: start' 'meshed=^mesh: done' 'space=^space: done' \
        'assemble=^assemble matrix: start' 'assembled=^assemble matrix: done' 'rhs=^time step [0-9]+: assemble' \
        'solve=^time step [0-9]+: solve' 'iteration=^ksp iteration [0-9]+' 'solved=^time step [0-9]+: done' \
        'output=^output: start' 'end=^end$' || fail "$name: log-times.py failed"
    $py "$build/truth.py" . "$np" > expected/dolfinx-truth.txt || fail "$name: the truth failed"
    pack_run "$name" "$otf2"
done
# Pairs whose compare verdict is known from the runs: one script and rank count under two
# placements or tracers is similar (PT-Scotch may give each run another neighbour graph: same
# program, same kind of exchange); the 2-D square against the 3-D cube on 4 ranks (another mesh,
# other neighbour degrees, message sizes and CG iteration counts) is not.
cat > "$out/dolfinx-pairs.txt" <<'PAIRS'
# A B expected
dolfinx-heat2d-4 dolfinx-heat2d-4-rankfile similar
dolfinx-heat2d-6 dolfinx-heat2d-6-otf2 similar
dolfinx-heat2d-4 dolfinx-heat3d-4 different
PAIRS
echo "dolfinx.sh: runs in $out; check them with: tools/record/check-heldout.py $out dolfinx-..." >&2
