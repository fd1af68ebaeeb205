#!/bin/sh
# Records escript (the Python finite element system of the University of Queensland, 5.6 as Debian
# ships it built with OpenMP and MPI: `apt-get install -y --no-install-recommends
# python3-escript-mpi python-escript-doc`, 11 + 7 packages; the -doc for the examples) as
# held-out runs, kept OUTSIDE the repository and never used to tune anything (docs/corpus.md,
# "Held-out check"): Debian's MPI launcher /usr/lib/python3-escript-mpi/lib/pythonMPI (a Python
# 3.11 interpreter that calls MPI_Init_thread itself; rank 0's stdout is kept, the other ranks'
# is discarded), unchanged, on Open MPI with SST DUMPI preloaded or with tools/otf2-tracer. It is
# started as run-escript would start it (LD_LIBRARY_PATH and PYTHONPATH set to the package's
# folders, OMP_NUM_THREADS=1: one OpenMP thread, so every MPI call is on the main thread). This
# is escript, not ESyS-Particle (esys.sh). Nothing is downloaded. From the repository root:
#
#   tools/record/escript.sh [OUT_ROOT [RUN...]]      (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT escript-...  (OUT_ROOT/escript-pairs.txt lists pairs
#                                                      with their expected compare verdict)
#
# The case (heat.py): the geotutorial example backward_euler.py that the package ships
# (/usr/share/doc/python-escript-doc/examples/escript_examples.tar.gz), with two lines changed
# and nothing else (the script checks the diff): the grid is 40 x 40 elements instead of 20 x 20
# (`Rectangle(l0=L0,l1=L1,n0=40,n1=40)`), so the solver takes ~80 iterations a step, not ~40, and
# `mypde.getSolverOptions().setVerbosityOn()` so that the solver prints its iterations. It
# solves the heat equation rho c_p dT/dt - div(k grad T) = Q on the unit square by backward
# Euler, dt = 0.01 until t_end = 0.1, with a disc-shaped heat source and T fixed at top and
# bottom, on a Dudley mesh (linear triangles: 41 x 41 = 1681 nodes, 3200 triangles); each step
# is one linear solve by Paso's PCG with the Jacobi preconditioner (the default in MPI mode) to
# a relative tolerance of 1e-8, then saveVTK writes the temperature to u.N.vtu. The loop is
# `while t < t_end` with t += dt, and t after 10 steps is 0.09999999999999999 < 0.1: the
# program runs 11 steps, N = 0 .. 10 (the log says so).
#
# What escript does in MPI (as the trace shows it; times are rank 0's in escript-4, in DUMPI's
# walltime clock counted from MPI_Init_thread's return; they vary by a third from run to run on
# a loaded 2-core machine):
#   start-up (0 to 1.14 s): Python imports esys.escript, numpy and friends: no MPI calls (pythonMPI
#     calls MPI_Initialized twice and MPI_Init_thread before the interpreter starts).
#   domain set-up (1.14 to ~1.17 s): Dudley builds the mesh distributed in slabs along x1 (rank
#     r owns the rows of nodes above rank r-1's): a ring pass of MPI_Sendrecv_replace to rank+1
#     from rank-1 (wrapping around: 3 -> 0), MPI_Allreduce, MPI_Alltoall and Irecv/Issend/
#     Waitall to set up the shared-node couplers (also a few Issends of a rank to itself),
#     MPI_Allgather of the distributions, a few Send/Recv/Isend.
#   time steps (11; saveVTK's MPI_File_open at 1.21, 1.24, 1.26, ... 1.48 s: 25 to 45 ms a step
#     with 4 ranks, ~0.1 s with 8): assembly of the right-hand side (local, a few
#     MPI_Allreduce), then the PCG solve: per iteration one halo exchange of the shared nodes
#     between neighbouring slabs (MPI_Irecv and MPI_Issend to rank-1 and rank+1, then one
#     MPI_Waitall; a fresh tag per exchange, the counter climbing from 30 to ~3900 through the
#     run) and four MPI_Allreduce (dot products, norms), with seven MPI_Wtime per solve (Paso's
#     timers); then saveVTK: 19 MPI_Allgather, MPI_Bcast, MPI_Reduce of sizes, then MPI-IO to
#     one shared file (MPI_File_open, set_view, set_size, three MPI_File_write_ordered, on rank
#     0 two MPI_File_write_shared for header and footer, close). The process graph of the halo
#     exchange is a chain 0-1-2-3 (0-1-...-7 with 8 ranks): the end ranks have one neighbour.
#   MPI_Finalize at 1.76 s, after Python's clean-up (8 ranks: set-up at 2.6 s, steps 2.85 to
#     3.98 s, MPI_Finalize at 4.96 s).
# The OTF2 tracer does not record MPI_File_*, MPI_Wtime, MPI_Comm_rank/size, MPI_Initialized
# (30588 calls against DUMPI's 31334); the other calls are the same.
#
# The truth, independently of tracelogic (expected/truth.txt): from escript's own log
# (stdout.txt): the steps ("time step N, t=..."), for each the solver's lines (method PCG,
# preconditioner Jacobi, "Step K: ... convergence!": K iterations); from the last output file
# (u.10.vtu, in vtu.tar.zst) the nodes and cells; from the decoder (dumpi2ascii; DUMPI runs
# only): per rank and per step (a step ends with saveVTK's MPI_File_open) the MPI_Waitall
# (halo exchanges) and MPI_Allreduce calls, which follow the log's K exactly (K + 7 Waitall
# and 4 K + 6 Allreduce per solve in this version), rank 0's MPI_File_open times, calls outside
# the main thread (0), MPI_ANY_SOURCE receives, and the messages per pair of ranks (halo
# exchange: Issend; other point-to-point).
#
# Runs: escript-4 (4 ranks, DUMPI), escript-4-otf2 (the same with the OTF2 tracer),
# escript-4-rankfile (4 ranks placed in reverse order on the cores by an Open MPI rankfile, kept
# as RUN/rankfile), escript-8 (8 ranks on 2 cores, oversubscribed). The iteration counts K can
# differ by one between 4 and 8 ranks (the dot products are summed in another order). A run's
# folder: command.txt, versions.txt, heat.py, stdout.txt (the log), stderr.txt, vtu.tar.zst
# (the 11 output files), the trace (dumpi.tar.zst, or trace.tar.zst for OTF2: trace/ packed) and
# expected/: the decoders' counts (expected-counts.sh) and truth.txt.
#
# Needs python3-escript-mpi and python-escript-doc, Open MPI, SST DUMPI (DUMPI_PREFIX, default
# /opt/dumpi), the OTF2 tracer (OTF2_TRACER), otf2-print, python3 and zstd. Each run takes 3 to 6
# s on 2 cores (DUMPI: 3.2 MB for 4 ranks, 5.0 MB for 8; 0.6 and 1.4 MB packed; OTF2 3.3 MB,
# 0.5 MB packed).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
E=/usr/lib/python3-escript-mpi
[ -x $E/lib/pythonMPI ] || { echo "escript.sh: python3-escript-mpi is missing (apt-get install -y --no-install-recommends python3-escript-mpi python-escript-doc)" >&2; exit 1; }
tgz=/usr/share/doc/python-escript-doc/examples/escript_examples.tar.gz
[ -f $tgz ] || { echo "escript.sh: $tgz missing (python-escript-doc)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d /tmp/escript-build.XXXXXX)
trap 'rm -rf "$build"' EXIT

# heat.py: the shipped example with the grid and the solver's verbosity changed (two lines).
tar -xzf $tgz -C "$build" examples/geotutorial/backward_euler.py
orig=$build/examples/geotutorial/backward_euler.py
sed -e 's/^    mydomain=Rectangle(l0=L0,l1=L1,n0=20,n1=20)$/    mydomain=Rectangle(l0=L0,l1=L1,n0=40,n1=40)/' \
    -e 's/^    mypde.setSymmetryOn()$/    mypde.setSymmetryOn()\n    mypde.getSolverOptions().setVerbosityOn()/' \
    "$orig" > "$build/heat.py"
[ "$(diff "$orig" "$build/heat.py" | grep -c '^[<>]')" = 3 ] || { echo "escript.sh: backward_euler.py is not the expected example" >&2; exit 1; }

cat > "$build/truth.py" <<'EOF'
import collections, glob, os, re, subprocess, sys
d, d2a = sys.argv[1], sys.argv[2]
so = open(os.path.join(d, "stdout.txt")).read()
print("escript's log (stdout.txt), one line per time step:")
steps = []   # (N, t, K, residual line)
for blk in re.split(r"\n(?=time step )", so):
    m = re.match(r"time step (\d+), t=(\S+)", blk)
    if not m:
        continue
    k = re.search(r"Solver: Step (\d+): (.*) convergence!", blk)
    meth = re.search(r"Solver: Iterative method is (\w+)", blk).group(1)
    prec = re.search(r"Preconditioner: (.*) preconditioner is used", blk).group(1)
    steps.append((int(m.group(1)), m.group(2), int(k.group(1)), meth, prec))
    print("  time step %s, t=%s: %s with %s, converged after %s iterations (%s)"
          % (m.group(1), m.group(2), meth, prec, k.group(1), k.group(2)))
K = [s[2] for s in steps]
print("time steps: %d (N = %d .. %d, dt = 0.01, t_end = 0.1); PCG iterations per step: %s, total %d"
      % (len(steps), steps[0][0], steps[-1][0], " ".join(map(str, K)), sum(K)))
vtu = subprocess.run(["tar", "-xOf", "-", "u.%d.vtu" % steps[-1][0]], check=True, capture_output=True,
                     input=subprocess.run(["zstd", "-dc", os.path.join(d, "vtu.tar.zst")], check=True,
                                          capture_output=True).stdout).stdout.decode()
m = re.search(r'<Piece NumberOfPoints="(\d+)" NumberOfCells="(\d+)"', vtu)
print("mesh (u.%d.vtu): %s nodes, %s cells (Dudley Rectangle 40 x 40: 41*41 = 1681 nodes, 2*40*40 = 3200 triangles)"
      % (steps[-1][0], m.group(1), m.group(2)))
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if not bins:
    print("(no DUMPI files: per-call truth only for DUMPI runs)")
    sys.exit(0)
np_ = len(bins)
print("ranks: %d" % np_)
halo = collections.Counter()    # (src, dst) -> Issend count
other = collections.Counter()   # (src, dst) -> Send/Isend/Sendrecv_replace count
thread = 0
anysrc = 0
perstep = {}                    # rank -> list of (Waitall, Allreduce) per segment
times0 = []
t0 = tfin = tset = None
for r, b in enumerate(bins):
    txt = subprocess.run([d2a, b], check=True, capture_output=True, text=True).stdout
    seg = [collections.Counter()]
    for blk in re.split(r"\n(?=MPI_\w+ entering)", txt):
        m = re.match(r"(MPI_\w+) entering at walltime ([\d.]+), cputime \S+ seconds in thread (\d+)", blk)
        if not m:
            continue
        f, t, th = m.group(1), float(m.group(2)), int(m.group(3))
        if th != 0:
            thread += 1
        if r == 0 and f == "MPI_Init_thread":
            t0 = float(re.search(r"MPI_Init_thread returning at walltime ([\d.]+)", blk).group(1))
        if f == "MPI_File_open":
            seg.append(collections.Counter())
            if r == 0:
                times0.append(t - t0)
        if r == 0 and f == "MPI_Finalize":
            tfin = t - t0
        if r == 0 and tset is None and t0 is not None and f not in ("MPI_Init_thread", "MPI_Initialized", "MPI_Comm_rank", "MPI_Comm_size"):
            tset = (f, t - t0)
        seg[-1][f] += 1
        ints = dict(re.findall(r"\bint (\w+)=(-?\d+)", blk))
        if f == "MPI_Issend":
            halo[(r, int(ints["dest"]))] += 1
        elif f in ("MPI_Send", "MPI_Isend", "MPI_Sendrecv_replace"):
            other[(r, int(ints["dest"]))] += 1
        if f in ("MPI_Recv", "MPI_Irecv", "MPI_Sendrecv_replace") and ints.get("source") == "-1":
            anysrc += 1
    perstep[r] = seg
print("per step (a step's solve ends before saveVTK's MPI_File_open; the first segment also holds the set-up):")
for i, s in enumerate(steps):
    w = " ".join("%d" % perstep[r][i]["MPI_Waitall"] for r in range(np_))
    a = " ".join("%d" % perstep[r][i]["MPI_Allreduce"] for r in range(np_))
    print("  step %d: K = %d; MPI_Waitall per rank %s; MPI_Allreduce per rank %s" % (s[0], s[2], w, a))
ok = all(perstep[r][i]["MPI_Waitall"] == s[2] + 7 and perstep[r][i]["MPI_Allreduce"] == 4 * s[2] + 6
         for r in range(np_) for i, s in enumerate(steps) if i > 0)
print("steps 1..%d on every rank: MPI_Waitall = K + 7 and MPI_Allreduce = 4 K + 6: %s"
      % (steps[-1][0], "yes" if ok else "NO"))
print("MPI_File_open (saveVTK) per rank: %s (expected %d)"
      % (" ".join("%d:%d" % (r, len(perstep[r]) - 1) for r in range(np_)), len(steps)))
print("rank 0, seconds after MPI_Init_thread returned: first call of the domain set-up (%s) at %.3f" % tset)
print("rank 0, seconds after MPI_Init_thread returned: MPI_File_open (end of each step) at %s; MPI_Finalize at %.2f"
      % (" ".join("%.3f" % t for t in times0), tfin))
print("calls outside the main thread: %d; receives with MPI_ANY_SOURCE: %d" % (thread, anysrc))
print("halo exchange (MPI_Issend) per pair src->dst:")
print("  " + "  ".join("%d->%d %d" % (s, t, c) for (s, t), c in sorted(halo.items())))
print("other point-to-point sends (MPI_Send, MPI_Isend, MPI_Sendrecv_replace) per pair src->dst:")
print("  " + "  ".join("%d->%d %d" % (s, t, c) for (s, t), c in sorted(other.items())))
big = sorted({(min(s, t), max(s, t)) for (s, t), c in halo.items() if c > 100})
print("halo graph (pairs with more than 100 Issends either way): %s" % " ".join("%d-%d" % e for e in big))
EOF

runs="escript-4 escript-4-otf2 escript-4-rankfile escript-8"
for name in $runs; do
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    dir=$out/$name
    if [ -e "$dir" ]; then echo "escript.sh: $name exists, skipped" >&2; continue; fi
    np=4
    case $name in escript-8*) np=8 ;; esac
    set -- --input "$build/heat.py" --mpirun-opt "-x OMP_NUM_THREADS=1" \
        --mpirun-opt "-x LD_LIBRARY_PATH=$E/lib" --mpirun-opt "-x PYTHONPATH=$E"
    case $name in *-otf2) set -- "$@" --otf2 ;; esac
    case $name in *-rankfile)
        # rank i on core (NP - 1 - i) mod cores: the placement changes, not the numbering. Bound
        # two to a core, Open MPI's busy polling would starve the peer (examl.sh): yield when idle.
        "$rec/reverse-rankfile.sh" "$np" "$build/rankfile"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile" --mpirun-opt --report-bindings \
            --mpirun-opt "--mca mpi_yield_when_idle 1" ;;
    esac
    echo "==> $name" >&2
    if ! timeout 300 "$rec/record.sh" "$dir" "$np" "$@" -- $E/lib/pythonMPI heat.py < /dev/null; then
        mv "$dir" "$build/failed-$name" 2>/dev/null || true
        echo "escript.sh: $name failed" >&2; exit 1
    fi
    case $name in *-rankfile) cp "$build/rankfile" "$dir/rankfile" ;; esac
    {
        echo "package: python3-escript-mpi $(dpkg-query -W -f='${Version}' python3-escript-mpi 2>/dev/null), python-escript-doc $(dpkg-query -W -f='${Version}' python-escript-doc 2>/dev/null), libpython3.11 $(dpkg-query -W -f='${Version}' libpython3.11 2>/dev/null), python3-numpy $(dpkg-query -W -f='${Version}' python3-numpy 2>/dev/null)"
        echo "program: $E/lib/pythonMPI (sha256 $(sha256sum $E/lib/pythonMPI | cut -d' ' -f1)), unchanged"
        echo "input: heat.py = examples/geotutorial/backward_euler.py of $tgz with n0=n1=40 (was 20) and setVerbosityOn(); environment OMP_NUM_THREADS=1 LD_LIBRARY_PATH=$E/lib PYTHONPATH=$E"
    } >> "$dir/versions.txt"
    [ "$(grep -c '^time step ' "$dir/stdout.txt")" = 11 ] || { echo "escript.sh: $name: not 11 time steps in stdout.txt" >&2; exit 1; }
    [ "$(grep -c 'convergence!' "$dir/stdout.txt")" = 11 ] || { echo "escript.sh: $name: a solve did not converge" >&2; exit 1; }
    (cd "$dir" && tar -cf - u.*.vtu | zstd -12 -q -T2 -o vtu.tar.zst && rm -f u.*.vtu)
    "$rec/expected-counts.sh" "$dir"
    python3 "$build/truth.py" "$dir" "$d2a" > "$dir/expected/truth.txt"
    "$rec/pack.sh" "$dir"
    echo "recorded $dir ($(du -sh "$dir" | cut -f1))" >&2
done
# Pairs whose compare verdict is known from the program: the same case under another tracer or
# another placement is similar (the same calls in the same order; only the timing and the PCG's
# last digits can move). 4 against 8 ranks: the same program on twice the slabs; no verdict is
# claimed.
cat > "$out/escript-pairs.txt" <<'PAIRS'
# A B expected
escript-4 escript-4-otf2 similar
escript-4 escript-4-rankfile similar
PAIRS
echo "escript.sh: runs in $out; check them with: tools/record/check-heldout.py $out escript-..." >&2
