#!/bin/bash
# Records GPAW (the real-space grid projector-augmented-wave DFT code of DTU, 22.8.0 as Debian ships
# it: `apt-get install -y gpaw gpaw-data`) as held-out runs, kept OUTSIDE the repository and never
# used to tune anything (docs/corpus.md, "Held-out check"): Debian's Python package and its C
# extension _gpaw (built with MPI), unchanged, running a Python script written here with
# /usr/bin/python3 on Open MPI, with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned
# tracelogic for GPAW. Nothing is downloaded: the molecule is ASE's own (ase.build.molecule), the
# PAW setups are Debian's gpaw-data (/usr/share/gpaw-setups). From the repository root:
#
#   tools/record/gpaw.sh [OUT_ROOT [RUN...]]        (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT gpaw-...  (one table)
#
# Runs already present are skipped, so it can be interrupted and rerun. A run's name says what it
# is: gpaw-h2o-NP-DXxDYxDZ[-otf2][-rankfile], DUMPI unless `-otf2`, `-rankfile` under an Open MPI
# rankfile (the permutation of runs.sh's `rankfile`: the placement changes, not the numbering;
# kept as RUN/rankfile, stderr.txt has --report-bindings). Every run computes the same thing: the
# ground state of one H2O molecule (ASE's geometry, 2.5 A of vacuum, not periodic) in GPAW's
# finite-difference mode (grid spacing 0.25 A: a 20 x 28 x 24 coarse grid, 40 x 56 x 48 fine
# grid), LDA, 6 bands, Davidson eigensolver, Pulay density mixing, stopped after exactly ITER = 8
# SCF iterations (convergence criteria of 1e-12 that no run reaches; the script catches GPAW's
# KohnShamConvergenceError), then an output stage: the pseudo density gathered from every domain
# (calc.get_pseudo_density) and written to density.cube by rank 0. The only parallelisation is
# domain decomposition: parallel={'domain': (DX, DY, DZ)} with DX * DY * DZ = NP (no k-point or
# band groups; GPAW checks the product). GPAW places domain rank r at (r // (DY*DZ), (r // DZ) %
# DY, r % DZ) (gpaw/domain.py, row-major) and gives it grid points [n_p[i], n_p[i+1]) per axis,
# n_p = round(p * N / P + 0.4999), n_p[0] = 1 on a non-periodic axis (grid_descriptor.py); its
# domain communicator is an MPI_Comm_create of all world ranks in order, so domain rank = world
# rank. The Poisson equation is solved with poissonsolver={'name': 'fd'} (GPAW's multigrid Jacobi
# solver, the default before 21.x): every finite-difference stencil, restriction and
# interpolation is then a halo exchange with the face neighbours of the domain grid (MPI_Isend /
# MPI_Irecv / MPI_Wait, MPI_DOUBLE), and no redistribution of the grid (the default
# FastPoissonSolver transposes the grid between all domains). Atom-centred quantities (projections,
# density matrices, LCAO set-up) add a little traffic between other pairs, and the reductions are
# MPI_Allreduce / MPI_Reduce / MPI_Bcast on the domain communicator. Python runs with
# OMP_NUM_THREADS=1.
#
# GPAW's text log: the script opens gpaw.txt line-buffered on rank 0 (the other ranks log to
# /dev/null) and passes it as txt=, so every line is a write(2); the iotimes shim
# (tools/record/iotimes.c, IOTIMES_WRITES=1 IOTIMES_MATCH=gpaw.txt) dates each on the trace's
# clock. Its lines (in order): the header ("User:"), "Initialize ...", "... initialized",
# "Initializing position-dependent things.", "Creating initial wave functions:" (LCAO start),
# the positions ending with "Effective grid spacing" (the SCF loop starts after it), "iter: N"
# after SCF iteration N's eigensolver step (gpaw/scf.py: eigensolver, energy and convergence
# check, the line, then the density and Hamiltonian update with its Poisson solve, which is
# therefore counted with the next iteration; the table's header is written with iteration 1), after
# the last one GPAW updates density and Hamiltonian once more (the loop's update; one Poisson
# solve) and writes "Did not converge!", then the script's
# own lines through GPAW's logger: "gpaw.sh: SCF stopped at maxiter 8", "gpaw.sh: output: start",
# "gpaw.sh: output: density ... written", and GPAW's "Timing:" table and "Memory usage" (the
# script calls calc.close() and calc.log.close(); left to the interpreter's exit, they are lost
# when gpaw.txt happens to be closed first).
# Besides, the script wraps GPAW's FDPoissonSolver.solve_neutral so that each Poisson solve
# writes "gpaw.sh: Poisson solve: N iterations" when it returns (N: GPAW's own count of multigrid
# V-cycles, each ending with an MPI_Allreduce of the residual; the solve's count varies with the
# density, so the SCF iterations differ in length).
#
# A run's folder: command.txt, versions.txt, h2o.py (the script run), gpaw.txt (GPAW's log),
# density.cube, stdout.txt, iotimes*.log, the trace packed (dumpi.tar.zst or trace.tar.zst; the
# unpacked files are removed) and the truth in expected/, independently of tracelogic:
#   gpaw-log.txt     from gpaw.txt: the version, cores, "Domain decomposition: DX x DY x DZ"
#                    (checked against the declared one), coarse and fine grids, atoms, bands,
#                    electrons, Poisson solver, eigensolver, SCF iterations ("iter:" lines) and how
#                    they ended; the Poisson solves and their V-cycles by stage (the script's
#                    lines); each rank's domain position, coarse-grid points and face
#                    neighbours by GPAW's rules above; the expected graph (the non-periodic
#                    DX x DY x DZ grid); from the decoder (dumpi2ascii, communicator ranks made
#                    world ranks through MPI_Comm_group / MPI_Group_incl / MPI_Comm_create;
#                    otf2-print's receiver locations) every sending pair (world ranks) with its
#                    sends and bytes, the share of messages and bytes between face neighbours and
#                    the pairs off the grid (the script stops when a face pair carries nothing);
#                    the calls of every rank in each SCF iteration (between the dated lines:
#                    iteration 1 from "Effective grid spacing" to "iter: 1", its eigensolver step
#                    alone, iteration N from "iter: N-1" to "iter: N", an update and an eigensolver
#                    step; rank 0's dates, so another rank's calls near a boundary may fall on
#                    either side), in set-up, after the last iteration and in output
#   log-times.tsv, log-calls.tsv  the lines above dated on the trace's clock, and the MPI calls of
#                    all ranks between them (tools/record/log-times.py)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
# and OUT_ROOT/gpaw-pairs.txt lists pairs with their expected `compare` verdict (the format of
# check-heldout.py's pairs.txt; copy or link it as pairs.txt to check them).
#
# Needs gpaw 22.8.0 and gpaw-data (Debian), /usr/bin/python3, Open MPI (4.1.4 tested), SST DUMPI
# (tools/record/build-dumpi.sh; DUMPI_PREFIX), the OTF2 tracer (tools/otf2-tracer/build.sh;
# OTF2_TRACER), otf2-print (apt: otf2-tools), gcc and zstd. Each run takes 5-20 s on 2 cores, but
# the rankfile run about 2 minutes (two ranks bound to each core: Open MPI's busy polling); the
# packed traces are 1-5 MB.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
py=/usr/bin/python3
{ $py -c 'import gpaw, _gpaw' 2> /dev/null && [ -f /usr/share/gpaw-setups/O.LDA.gz ]; } ||
    { echo "gpaw.sh: GPAW is missing (apt-get install -y gpaw gpaw-data)" >&2; exit 1; }

runs="gpaw-h2o-4-2x2x1 gpaw-h2o-4-2x2x1-rankfile gpaw-h2o-8-2x2x2 gpaw-h2o-8-2x2x2-otf2 \
gpaw-h2o-4-4x1x1"
select_runs gpaw

build_dir gpaw
fail() { echo "gpaw.sh: $1" >&2; exit 1; }
iters=8
gcc -shared -fPIC -O2 -o "$build/libiotimes.so" "$rec/iotimes.c" -ldl || fail "building iotimes.c failed"

# The calculation (see the top of this file); DX, DY, DZ and ITER are filled in per run.
cat > "$build/h2o.py.in" <<'EOF'
# gpaw.sh (tracelogic tools/record): H2O in GPAW's FD mode, domain decomposition only.
from ase.build import molecule
from ase.io import write
from gpaw import GPAW, KohnShamConvergenceError
from gpaw.mpi import world
DOMAIN = (@DX@, @DY@, @DZ@)
ITER = @ITER@
# Line-buffered on rank 0, so that each log line is one write(2) (dated by iotimes).
txt = open("gpaw.txt", "w", buffering=1) if world.rank == 0 else None
# Each solve of the multigrid Poisson solver writes its number of V-cycles (GPAW's own count, the
# value Hamiltonian.update keeps as npoisson) to the log: no MPI call is added.
import gpaw.poisson
solve_neutral = gpaw.poisson.FDPoissonSolver.solve_neutral
def logged_solve_neutral(self, phi, rho, timer=None):
    n = solve_neutral(self, phi, rho, timer=timer)
    if txt is not None:
        txt.write("gpaw.sh: Poisson solve: %d iterations\n" % n)
    return n
gpaw.poisson.FDPoissonSolver.solve_neutral = logged_solve_neutral
atoms = molecule("H2O")
atoms.center(vacuum=2.5)
calc = GPAW(mode="fd", h=0.25, xc="LDA", txt=txt, maxiter=ITER,
            convergence={"energy": 1e-12, "density": 1e-12, "eigenstates": 1e-20},
            poissonsolver={"name": "fd"}, parallel={"domain": DOMAIN})
atoms.calc = calc
try:
    atoms.get_potential_energy()
    calc.log("gpaw.sh: converged before maxiter")
except KohnShamConvergenceError:
    calc.log("gpaw.sh: SCF stopped at maxiter %d" % ITER)
calc.log("gpaw.sh: output: start")
n = calc.get_pseudo_density()
write("density.cube", atoms, data=n)
calc.log("gpaw.sh: output: density %s written to density.cube" % "x".join(map(str, n.shape)))
# GPAW's closing lines (timing table; memory and date), written before the interpreter's exit
# closes gpaw.txt; then gpaw.txt is closed, so that GPAW's __del__ writes nothing more.
calc.close()
calc.log.close()
if txt is not None:
    txt.close()
EOF

# The truth (see the top of this file): DX DY DZ ITER RUN_DIR, on stdout; needs
# RUN_DIR/expected/log-times.tsv (log-times.py runs first).
cat > "$build/truth.py" <<'EOF'
import collections, glob, os, re, subprocess, sys
dx, dy, dz, iters = (int(a) for a in sys.argv[1:5])
d = sys.argv[5]
P = (dx, dy, dz)
np_ = dx * dy * dz
def fail(m): sys.exit("gpaw.sh: truth: " + m)
log = open(os.path.join(d, "gpaw.txt")).read()
def one(rx):
    m = re.search(rx, log, re.M)
    if not m: fail("gpaw.txt has no " + rx)
    return m.groups() if len(m.groups()) > 1 else m.group(1)
version = one(r"^ \|__ \|  _\|___\|_____\|\s+(\S+)")
cores = int(one(r"^Total number of cores used: (\d+)"))
dd = tuple(int(x) for x in one(r"^Domain decomposition: (\d+) x (\d+) x (\d+)"))
coarse = tuple(int(x) for x in one(r"Coarse grid: (\d+)\*(\d+)\*(\d+) grid"))
fine = tuple(int(x) for x in one(r"Fine grid: (\d+)\*(\d+)\*(\d+) grid"))
pbc = [p == "yes" for p in re.findall(r"^  \d\. axis:\s+(yes|no)\s", log, re.M)]
natoms = int(one(r"^Number of atoms: (\d+)"))
nbands = int(one(r"^Number of bands in calculation: (\d+)"))
nelec = int(one(r"^Number of valence electrons: (\d+)"))
poisson = one(r"^  Poisson solver: (.*)$").strip()
eigensolver = one(r"^Eigensolver\n\s+(.*)$").strip()
iterl = [int(x) for x in re.findall(r"^iter:\s+(\d+)\s", log, re.M)]
if cores != np_: fail("gpaw.txt says %d cores, not %d" % (cores, np_))
if dd != P: fail("gpaw.txt's domain decomposition %s is not the declared %s" % (dd, P))
if len(pbc) != 3: fail("no periodicity in gpaw.txt's unit cell")
if iterl != list(range(1, iters + 1)): fail("SCF iterations %s, not 1..%d" % (iterl, iters))
if "Did not converge!" not in log: fail("the run converged before maxiter")
print("# From gpaw.txt (GPAW's own log), h2o.py (the declared domain) and the tracer's decoder; gpaw.sh.")
print("GPAW %s; system: H2O, %d atoms, %d valence electrons, %d bands; not periodic (pbc %s)" % (
    version, natoms, nelec, nbands, "".join("1" if p else "0" for p in pbc)))
print("grid: coarse %s, fine %s points; Poisson solver: %s; eigensolver: %s" % (
    "x".join(map(str, coarse)), "x".join(map(str, fine)), poisson, eigensolver))
print("declared: parallel={'domain': (%d, %d, %d)}; gpaw.txt: 'Total number of cores used: %d', 'Domain decomposition: %d x %d x %d'" % (P + (cores,) + dd))
print("SCF iterations: %d ('iter:' lines), ended by 'Did not converge!' at maxiter %d (criteria 1e-12, never met)" % (len(iterl), iters))
# GPAW's rules (gpaw/domain.py, gpaw/grid_descriptor.py).
def pos(r): return (r // (dy * dz), (r // dz) % dy, r % dz)
def bounds(c):
    import numpy
    n = [int(x) for x in numpy.around(numpy.arange(P[c] + 1) * float(coarse[c]) / P[c] + 0.4999)]
    if not pbc[c]: n[0] = 1
    return n
nb = [bounds(c) for c in range(3)]
at = {pos(r): r for r in range(np_)}
pairs = set()
for r in range(np_):
    p = pos(r)
    nbr = []
    for c in range(3):
        for s in (-1, 1):
            q = list(p); q[c] += s
            if not pbc[c] and not 0 <= q[c] < P[c]: continue
            q[c] %= P[c]
            o = at[tuple(q)]
            if o != r:
                nbr.append(o); pairs.add((min(r, o), max(r, o)))
    rng = " ".join("%d..%d" % (nb[c][p[c]], nb[c][p[c] + 1] - 1) for c in range(3))
    print("rank %d: domain (%d,%d,%d), coarse-grid points %s, face neighbours: %s" % (
        (r,) + p + (rng, " ".join(map(str, sorted(set(nbr)))) or "none")))
print("expected graph: the non-periodic %dx%dx%d grid of ranks 0..%d, %d face pairs: %s" % (
    dx, dy, dz, np_ - 1, len(pairs), " ".join("%d-%d" % q for q in sorted(pairs))))
# The decoder: calls (time, function) and sends (world destination, bytes) per rank.
size = {"MPI_BYTE": 1, "MPI_CHAR": 1, "MPI_INT": 4, "MPI_LONG": 8, "MPI_DOUBLE": 8, "MPI_DOUBLE_COMPLEX": 16, "MPI_C_DOUBLE_COMPLEX": 16}
calls = [[] for _ in range(np_)]
sends = collections.Counter(); nbytes = collections.Counter()
SENDS = ("MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Rsend", "MPI_Bsend", "MPI_Sendrecv")
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if bins:
    decoder = "dumpi2ascii"
    if len(bins) != np_: fail("%d DUMPI rank files" % len(bins))
    d2a = os.environ.get("DUMPI2ASCII", "/opt/dumpi/bin/dumpi2ascii")
    for r, b in enumerate(bins):
        comm = {2: list(range(np_))}; group = {}
        fn = None; f = {}
        def done():
            if fn in SENDS and f.get("dest", -2) >= 0:
                if f["comm"] not in comm: fail("rank %d: a send on communicator %s of unknown members" % (r, f["comm"]))
                w = comm[f["comm"]][f["dest"]]
                sends[(r, w)] += 1; nbytes[(r, w)] += f["count"] * size.get(f["type"], 0)
            elif fn == "MPI_Comm_group": group[f["group"]] = comm[f["comm"]]
            elif fn == "MPI_Group_incl": group[f["newgroup"]] = [group[f["group"]][i] for i in f["ranks"]]
            elif fn == "MPI_Comm_dup": comm[f["newcomm"]] = comm[f["comm"]]
            elif fn == "MPI_Comm_create" and f.get("newcomm_ok"): comm[f["newcomm"]] = group[f["group"]]
        for line in subprocess.run([d2a, b], capture_output=True, text=True, check=True).stdout.splitlines():
            m = re.match(r"^(MPI_\w+) entering at walltime ([\d.]+)", line)
            if m:
                fn, f = m.group(1), {}
                calls[r].append((float(m.group(2)), fn))
                continue
            if re.match(r"^MPI_\w+ returning at", line):
                done(); fn = None; continue
            m = re.match(r"^(?:int|MPI_\w+) (\w+)(?:\[\d+\])?=(.*)$", line)
            if not m or fn is None: continue
            k, v = m.group(1), m.group(2)
            if k in ("count", "sendcount", "dest"): f[{"sendcount": "count"}.get(k, k)] = int(v)
            elif k in ("datatype", "sendtype"): f["type"] = v.split("(")[-1].rstrip(")")
            elif k == "ranks": f["ranks"] = [int(x) for x in v.strip("[]").split(",") if x.strip()]
            elif k in ("comm", "oldcomm", "group", "newgroup", "newcomm"):
                h = int(v.split()[0])
                if k == "oldcomm": k = "comm"
                f[k] = h
                if k == "newcomm": f["newcomm_ok"] = "NULL" not in v
else:
    decoder = "otf2-print"
    anchor = os.path.join(d, "trace", "traces.otf2")
    out = subprocess.run(["otf2-print", anchor], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r'^ENTER\s+(\d+)\s+(\d+)\s+Region: "(MPI_\w+)"', line)
        if m: calls[int(m.group(1))].append((int(m.group(2)) / 1e9, m.group(3))); continue
        m = re.match(r'^MPI_I?SEND\s+(\d+)\s+\d+\s+Receiver: \d+ \("[^"]*" <(\d+)>\).*Length: (\d+)', line)
        if m:
            a, w = int(m.group(1)), int(m.group(2))
            sends[(a, w)] += 1; nbytes[(a, w)] += int(m.group(3))
und = collections.Counter(); undb = collections.Counter()
for (a, b), n in sends.items():
    und[(min(a, b), max(a, b))] += n; undb[(min(a, b), max(a, b))] += nbytes[(a, b)]
tm, tb = sum(und.values()), sum(undb.values())
print("%s: %d point-to-point sends, %d bytes, %d communicating pairs" % (decoder, tm, tb, len(und)))
print("sending pairs (world ranks: sends, bytes both ways): " + " ".join(
    "%d-%d:%d:%d%s" % (a, b, und[(a, b)], undb[(a, b)], "" if (a, b) in pairs else "(off)") for a, b in sorted(und)))
missing = [q for q in sorted(pairs) if und[q] == 0 or sends[q] == 0 or sends[(q[1], q[0])] == 0]
if missing: fail("face pairs without traffic both ways: %s" % missing)
off = [q for q in und if q not in pairs]
fm = sum(und[q] for q in pairs); fb = sum(undb[q] for q in pairs)
print("check: every face pair exchanges both ways; face pairs carry %.1f %% of the sends and %.1f %% of the bytes; %d pairs off the grid (%d sends, %d bytes: atom-centred data)" % (
    100.0 * fm / tm, 100.0 * fb / tb, len(off), tm - fm, tb - fb))
lightest_face = min(undb[q] for q in pairs); heaviest_off = max([undb[q] for q in off] or [0])
print("lightest face pair %d bytes, heaviest off-grid pair %d bytes (ratio %.1f)" % (
    lightest_face, heaviest_off, lightest_face / heaviest_off if heaviest_off else float("inf")))
# The Poisson solves (the script's lines, GPAW's count of multigrid V-cycles) by stage, from the
# order of gpaw.txt's lines.
stage, vc = "set-up", collections.OrderedDict()
for line in log.splitlines():
    m = re.match(r"^iter:\s+(\d+)\s", line)
    if m: stage = "after iter: %s" % m.group(1)
    if line.startswith("Did not converge!"): stage = "after 'Did not converge!'"
    m = re.match(r"^gpaw.sh: Poisson solve: (\d+) iterations", line)
    if m: vc.setdefault(stage, []).append(int(m.group(1)))
nsolve = sum(len(v) for v in vc.values()); ncycle = sum(sum(v) for v in vc.values())
print("Poisson solves (lines 'gpaw.sh: Poisson solve: N iterations'): %d solves, %d multigrid V-cycles in all; by stage: %s" % (
    nsolve, ncycle, "; ".join("%s: %s" % (k, "+".join(map(str, v))) for k, v in vc.items())))
same = all([c[1] for c in cs] == [c[1] for c in calls[0]] for cs in calls)
print("calls per rank: %s%s" % (" ".join(str(len(c)) for c in calls),
    "; the same functions in the same order on every rank" if same else "; NOT the same sequence on every rank"))
# Calls per rank in each stage, from the dated log lines.
marks = []
for line in open(os.path.join(d, "expected", "log-times.tsv")):
    x = line.rstrip("\n").split("\t")
    if len(x) == 5 and x[0] != "name": marks.append((x[0], x[2], float(x[4])))
t = {}
for name, text, mono in marks:
    t.setdefault(name if name != "iter" else "iter %d" % int(text.split()[1]), mono)
bounds_ = [("set-up (to 'Effective grid spacing')", None, t["scf"])]
prev = t["scf"]
for k in range(1, iters + 1):
    bounds_.append(("SCF iteration %d" % k, prev, t["iter %d" % k])); prev = t["iter %d" % k]
bounds_.append(("after the last iteration (to 'Did not converge!')", prev, t["notconv"]))
bounds_.append(("script's lines (to 'output: start')", t["notconv"], t["output"]))
bounds_.append(("output (to 'density ... written')", t["output"], t["written"]))
bounds_.append(("final (after it, with GPAW's timing table)", t["written"], None))
print("MPI calls per rank (%s) in each stage (dated by iotimes, expected/log-times.tsv):" % decoder)
for label, a, b in bounds_:
    per = []
    for cs in calls:
        sel = [f for tt, f in cs if (a is None or tt > a) and (b is None or tt <= b)]
        per.append(sel)
    fns = collections.Counter(f for sel in per for f in sel)
    print("  %s: %s calls; all ranks by function: %s" % (label, " ".join(str(len(s)) for s in per),
        " ".join("%s:%d" % (k[4:], v) for k, v in fns.most_common(6))))
EOF

for name in $todo; do
    b=${name#gpaw-h2o-}                # NP-DXxDYxDZ[-otf2][-rankfile]
    np=${b%%-*}
    grid=${b#*-}; grid=${grid%%-*}
    IFS=x read -r dx dy dz <<< "$grid"
    [ $((dx * dy * dz)) = "$np" ] || fail "$name: $grid is not $np ranks"
    sed -e "s/@DX@/$dx/; s/@DY@/$dy/; s/@DZ@/$dz/; s/@ITER@/$iters/" "$build/h2o.py.in" > "$build/h2o.py"
    dir=$out/$name
    set -- --input "$build/h2o.py" --preload "$build/libiotimes.so" \
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
    IOTIMES_WRITES=1 IOTIMES_MATCH=gpaw.txt \
        "$rec/record.sh" "$dir" "$np" "$@" -- $py h2o.py < /dev/null || fail "$name: record.sh failed"
    cd "$dir"
    grep -q '^gpaw.sh: output: density' gpaw.txt || fail "$name: no 'gpaw.sh: output: density' in gpaw.txt"
    grep -q '^Memory usage:' gpaw.txt || fail "$name: no 'Memory usage:' in gpaw.txt"
    [ -s stderr.txt ] || rm -f stderr.txt
    case $name in *-rankfile) cp "$build/rankfile-$name" rankfile ;; esac
    {
        echo "package: gpaw $(dpkg-query -W -f='${Version}' gpaw 2>/dev/null), gpaw-data $(dpkg-query -W -f='${Version}' gpaw-data 2>/dev/null), python3-ase $(dpkg-query -W -f='${Version}' python3-ase 2>/dev/null)"
        echo "launcher: $py h2o.py (Debian's GPAW, _gpaw with MPI), written by gpaw.sh (domain ($dx, $dy, $dz), $iters SCF iterations)"
    } >> versions.txt
    mkdir -p expected
    "$rec/rank0-iotimes.sh" .
    "$rec/log-times.py" . gpaw.txt 'start=^User:' 'init=^Initialize \.\.\.' 'initialized=^\.\.\. initialized' \
        'positions=^Initializing position-dependent things' 'lcao=^Creating initial wave functions' \
        'scf=^Effective grid spacing' 'poisson=^gpaw.sh: Poisson solve' 'iter=^iter: +[0-9]+' \
        'notconv=^Did not converge!' \
        'stopped=^gpaw.sh: SCF stopped' 'output=^gpaw.sh: output: start' 'written=^gpaw.sh: output: density' \
        'timing=^Timing:' 'end=^Memory usage:' || fail "$name: log-times.py failed"
    $py "$build/truth.py" "$dx" "$dy" "$dz" "$iters" . > expected/gpaw-log.txt || fail "$name: the truth failed"
    pack_run "$name" "$otf2"
done
# Pairs whose compare verdict is known from the runs: one script and domain grid under two
# placements or tracers is similar; one script on the same ranks but another decomposition (a
# 2 x 2 grid against a line of 4 domains: another neighbour graph, other halo sizes) is not.
cat > "$out/gpaw-pairs.txt" <<'PAIRS'
# A B expected
gpaw-h2o-4-2x2x1 gpaw-h2o-4-2x2x1-rankfile similar
gpaw-h2o-8-2x2x2 gpaw-h2o-8-2x2x2-otf2 similar
gpaw-h2o-4-2x2x1 gpaw-h2o-4-4x1x1 different
PAIRS
echo "gpaw.sh: runs in $out; check them with: tools/record/check-heldout.py $out gpaw-..." >&2
