#!/bin/sh
# Records GetDP (the finite element solver of P. Dular and C. Geuzaine, University of Liege;
# Debian's `getdp` 3.2.0, built with MPI, PETSc 3.18 and SLEPc: `getdp -info` says "Build options:
# ... MPI PETSc ... SLEPc") as held-out runs, kept OUTSIDE the repository and never used to tune
# anything (docs/corpus.md, "Held-out check"): the demo magnet.pro that the package ships
# (/usr/share/doc/getdp/examples/demos, with its mesh magnet.msh), on Open MPI with SST DUMPI
# preloaded or with tools/otf2-tracer. Nothing is downloaded. `apt-get install -y
# --no-install-recommends getdp` (26 packages: PETSc, SLEPc, MUMPS, hypre, Trilinos, ...).
# From the repository root:
#
#   tools/record/getdp.sh [OUT_ROOT [RUN...]]      (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT getdp-...  (OUT_ROOT/getdp-pairs.txt lists pairs
#                                                    with their expected compare verdict)
#
# The case: 2-D magnetostatics of a magnetic circuit, a rectangular iron core (14 x 14 cm)
# with a 5 mm air gap in one leg, driven by a permanent magnet in the other; the upper half is
# modelled (symmetry line y = 0), in air closed by a shell transformation to infinity
# (magnet.pro with the templates Lib_Magnetostatics_a_phi.pro and Lib_Materials.pro: the core's
# nonlinear B-H curve is SteelGeneric's table), in the vector potential formulation
# (resolution Magnetostatics_a: first-order nodal a_z, a_z = 0 on the exterior boundary) on the
# shipped mesh (1691 nodes, 3243 triangles: 1626 unknowns), with the demo's own switch for the
# nonlinear B-H curve of the core set (-setnumber Flag_NL 1): the template then runs a
# Newton-Raphson loop (Generate, Solve, Generate, GetResidual, then Solve, Generate,
# GetResidual until the residual is below NL_tol_abs = 1e-6: 7 Newton iterations, 8 linear
# solves). magnet.pro is copied with its two Include lines pointing at the templates' folder
# ("../templates/X.pro") changed to the same folder ("X.pro"), nothing else (the script checks
# the diff), so that a run's folder holds every input. The linear solver is PETSc's CG with the
# Jacobi preconditioner, to a relative tolerance of 1e-10 (at PETSc's default 1e-5 the Newton
# loop stalls at a relative residual of 4e-4 and stops at NL_iter_max = 20): ~335 iterations a
# solve. PETSc options go on GetDP's command line after the problem file (getdp -help; a file of
# them can be given with -solver); -skip_petscrc keeps ~/.petscrc out, -options_left has PETSc
# list the options it used ("There are no unused options."):
#
#   mpirun -np 4 getdp magnet.pro -msh magnet.msh -setnumber Flag_NL 1 -solve Magnetostatics_a
#       -v 5 -p 0 -ksp_type cg -pc_type jacobi -ksp_rtol 1e-10 -ksp_converged_reason
#       -skip_petscrc -options_left
#
# -v 5 (the default) makes GetDP print PETSc's residual at every CG iteration and its own
# "N iterations"; -p 0 turns the progress bars off. Everything goes to stdout (rank 0 prints;
# lines of other ranks are marked [rank N]); stderr is empty. The solution is written to
# magnet.res (magnet.pre: the degrees of freedom), kept in the run's folder.
#
# What GetDP does in MPI (as the trace shows it; times are rank 0's in getdp-4, in DUMPI's
# walltime clock counted from MPI_Init's return; they vary by a third from run to run on a
# loaded 2-core machine). Every rank parses the problem, reads the whole mesh and numbers the
# whole system (no MPI); the matrix is an MPIAIJ matrix distributed by rows (PETSc's default
# layout, 406 or 407 rows a rank with 4 ranks) and each rank keeps only its own rows of the
# element matrices, so matrix assembly sends nothing (the stash's MPI_Waitall have count 0):
#   start-up (0 to 0.17 s): GetDP's MPI_Reduce x3 at 0.04 s (wall/CPU/memory for its log; again
#     after pre-processing at 0.17 s and at the end), PETSc/SLEPc initialization at 0.10 s
#     (MPI_Add_error_class, ops and datatypes, keyvals, MPI_Bcast of the options, MPI_Barrier,
#     MPI_Comm_dup of MPI_COMM_WORLD), then parsing and reading the mesh (no MPI). DUMPI also
#     records two MPI_Initialized 0.4 s before MPI_Init.
#   each Generate (9): vectors and the matrix are created (MPI_Allreduce/MPI_Allgather of
#     layouts, on PETSc's duplicate of MPI_COMM_WORLD and on MPI_COMM_SELF for the sequential
#     copies every rank keeps), the elements are computed (a gap of 0.05 to 0.1 s with no
#     MPI), the matrix is assembled (MPI_Barrier, MPI_Allreduce) and its halo scatter set up:
#     MPI_Comm_group/MPI_Group_translate_ranks, then PetscCommBuildTwoSided: MPI_Allreduce of 4
#     ints, MPI_Irecv from MPI_ANY_SOURCE (one per rank that will send here), MPI_Isend of one
#     int to each neighbour, MPI_Waitall, MPI_Irecv/MPI_Isend of the index lists, then the
#     persistent MPI_Recv_init/MPI_Send_init of the halo (the previous matrix's are freed by
#     MPI_Request_free).
#   each solve (8; rank 0's halo exchanges at 0.26-0.56, 0.64-0.75, 0.83-0.93, 1.02-1.23,
#     1.27-1.38, 1.45-1.56, 1.63-1.76, 1.89-1.98 s, each segment's scatter set-up a few ms
#     before, the Generate's element loop before that): per CG iteration one MatMult, i.e. a
#     halo exchange (MPI_Startall of the receives, MPI_Startall of the sends, two
#     MPI_Waitall), and three MPI_Allreduce of one double (two dot products and the norm);
#     Jacobi is local.
#   each GetResidual (8): one MatMult (one halo exchange) and an MPI_Allreduce for the norm.
#   GetDP keeps a full sequential copy of its distributed vectors on every rank (solution,
#     right-hand side, residual), refreshed with PETSc's VecScatterCreateToAll: an
#     MPI_Iallgatherv, a call neither tracer wraps (42 per rank: 2 before the first matrix's
#     scatter, 3 in segment 1, 5 in each of segments 2-8, 2 in segment 9, counted with a PMPI
#     shim outside this script): the traces show only its MPI_Waitall, count 1, on a request
#     no recorded call made.
#   end (the last Generate and GetResidual at 2.08 s): MPI_Barrier, MPI_Reduce x3, PETSc's
#     clean-up (MPI_Comm_free, MPI_Op_free, MPI_Type_free), MPI_Finalize at 2.10 s (getdp-8,
#     recorded while the machine was loaded: segments 0.77 to 7.94 s, MPI_Finalize at 7.98 s;
#     4.4 s in a quieter test run).
# The halo graph follows the dof numbering of the shipped mesh, not a partition: with 4 ranks
# 5 of the 6 pairs exchange (1 and 3 do not), with 8 ranks 18 of 28 (rank 0 with all). The OTF2
# tracer does not record MPI_Comm_rank/size, MPI_Type_size, MPI_Comm_get_attr/set_attr,
# MPI_Type_get_envelope and the other local calls (78888 calls against DUMPI's 172564 with 4
# ranks); the communication calls are the same. Every MPI call is on the main thread (GetDP:
# "max. 1 thread").
#
# The truth, independently of tracelogic (expected/truth.txt): from GetDP's own log
# (stdout.txt): ranks ("[GetDP 3.2.0, 4 nodes, ...]"), unknowns ("System 1/1: 1626 Dofs" on
# every rank), the solver ("N: 1626 - cg jacobi"), the operations (Generate 9, Solve 8,
# GetResidual 8), for each solve the CG iterations K (PETSc's "Linear solve converged due to
# CONVERGED_RTOL iterations K", GetDP's "K iterations", K + 1 residual lines), the Newton
# residuals 000 .. 007, PETSc's option table; from the mesh (magnet.msh) the nodes, the
# triangles per region and the nodes on the exterior boundary (1691 - 65 = 1626 unknowns);
# from the decoder (dumpi2ascii; DUMPI runs only): calls per rank, per rank and per segment
# (a segment starts at the halo scatter set-up of a freshly assembled matrix: 1 = Generate 1 +
# solve 1, i = Generate i + GetResidual + solve i, 9 = Generate 9 + GetResidual) the halo
# exchanges, which follow the log exactly (K_1, K_i + 1, 1), and the MPI_Allreduce of one
# value (3 K + a constant), rank 0's segment times, calls outside the main thread (0),
# MPI_ANY_SOURCE receives (PetscCommBuildTwoSided, 3 per set-up on rank 0 with 4 ranks), waits
# on unrecorded requests (the MPI_Iallgatherv, 42 per rank), and the messages per pair of
# ranks (halo sends started by MPI_Startall; set-up MPI_Isend). The iteration counts K can
# differ by one between runs with another number of ranks (the dot products are summed in
# another order).
#
# Runs: getdp-4 (4 ranks, DUMPI), getdp-4-otf2 (the same with the OTF2 tracer),
# getdp-4-rankfile (4 ranks placed in reverse order on the cores by an Open MPI rankfile, kept
# as RUN/rankfile), getdp-8 (8 ranks on 2 cores, oversubscribed). A run's folder:
# command.txt, versions.txt, the inputs (magnet.pro, magnet_data.pro, Lib_Materials.pro,
# Lib_Magnetostatics_a_phi.pro, magnet.msh), stdout.txt (the log), stderr.txt, magnet.pre and
# magnet.res (GetDP's output), the trace (dumpi.tar.zst, or trace.tar.zst for OTF2: trace/
# packed) and expected/: the decoders' counts (expected-counts.sh) and truth.txt.
#
# Needs getdp, Open MPI, SST DUMPI (DUMPI_PREFIX, default /opt/dumpi), the OTF2 tracer
# (OTF2_TRACER), otf2-print, python3 and zstd. Each run takes 3 to 9 s on 2 cores, the script
# ~1 min with the decoding (DUMPI: 7.0 MB for 4 ranks, 15 MB for 8; 2.9 and 6.4 MB packed; OTF2
# 5.3 MB, 1.3 MB packed).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
prog=$(command -v getdp || true)
[ -n "$prog" ] || { echo "getdp.sh: getdp is missing (apt-get install -y --no-install-recommends getdp)" >&2; exit 1; }
getdp -info 2>&1 | grep -q 'Build options.* MPI .*PETSc' || { echo "getdp.sh: this getdp is not built with MPI and PETSc" >&2; exit 1; }
ex=/usr/share/doc/getdp/examples
for f in demos/magnet.pro demos/magnet_data.pro demos/magnet.msh templates/Lib_Materials.pro templates/Lib_Magnetostatics_a_phi.pro; do
    [ -f "$ex/$f" ] || { echo "getdp.sh: $ex/$f missing (getdp)" >&2; exit 1; }
done
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
unset PETSC_OPTIONS
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d /tmp/getdp-build.XXXXXX)
trap 'rm -rf "$build"' EXIT

# The demo, its data, the two templates it includes and its mesh in one folder: magnet.pro with
# its two Include lines changed from ../templates/ to the same folder (two lines, nothing else).
cp "$ex/demos/magnet_data.pro" "$ex/demos/magnet.msh" "$ex/templates/Lib_Materials.pro" \
    "$ex/templates/Lib_Magnetostatics_a_phi.pro" "$build/"
sed -e 's|^Include "\.\./templates/Lib_Materials\.pro";$|Include "Lib_Materials.pro";|' \
    -e 's|^Include "\.\./templates/Lib_Magnetostatics_a_phi\.pro"$|Include "Lib_Magnetostatics_a_phi.pro"|' \
    "$ex/demos/magnet.pro" > "$build/magnet.pro"
[ "$(diff "$ex/demos/magnet.pro" "$build/magnet.pro" | grep -c '^[<>]')" = 4 ] || { echo "getdp.sh: magnet.pro is not the expected demo" >&2; exit 1; }

cat > "$build/truth.py" <<'EOF'
import collections, glob, os, re, subprocess, sys
d, d2a = sys.argv[1], sys.argv[2]
log = re.sub(r"\x1b\[[0-9;]*m", "", open(os.path.join(d, "stdout.txt")).read())
print("GetDP's log (stdout.txt; GetDP -v 5 prints PETSc's residual at every KSP iteration, -ksp_converged_reason the reason):")
m = re.search(r"^Info    : Running '(.*)' \[GetDP ([\d.]+), (\d+) nodes?, max\. (\d+) threads?\]", log, re.M)
print("  command: %s" % m.group(1))
print("  GetDP %s on %s MPI processes, max. %s thread" % (m.group(2), m.group(3), m.group(4)))
nlog = int(m.group(3))
dofs = sorted(set(re.findall(r"System 1/1: (\d+) Dofs", log)))
ranks_dofs = len(re.findall(r"System 1/1: (\d+) Dofs", log))
print("  system A: %s degrees of freedom (reported by %d ranks: every rank numbers the whole system)" % (" ".join(dofs), ranks_dofs))
solver = re.search(r"^Info    : N: (\d+) - (\w+) (\w+)", log, re.M)
print("  linear solver: N = %s, KSP %s, PC %s" % solver.groups())
ops = re.findall(r"^Info    : (Generate|Solve|GetResidual|SaveSolution|InitSolution)\[A\]", log, re.M)
print("  operations: %s" % ", ".join("%s %d" % (o, ops.count(o)) for o in ("InitSolution", "Generate", "Solve", "GetResidual", "SaveSolution")))
# One block per Solve[A]: the KSP residual lines, PETSc's reason, GetDP's count.
K = []
for blk in re.split(r"^Info    : Solve\[A\]$", log, flags=re.M)[1:]:
    blk = re.split(r"^Info    : Generate\[A\]$", blk, flags=re.M)[0]
    r = re.search(r"^Linear solve converged due to (\w+) iterations (\d+)$", blk, re.M)
    g = re.search(r"^Info    : (\d+) iterations$", blk, re.M)
    mon = re.findall(r"^Info    : +(\d+) KSP Residual norm (\S+)$", blk, re.M)
    K.append(int(r.group(2)))
    print("  solve %d: %s after %s iterations (GetDP: %s; KSP residual lines %d, 0..%s, last %s)"
          % (len(K), r.group(1), r.group(2), g.group(1), len(mon), mon[-1][0], mon[-1][1]))
res = re.findall(r"^Residual (\d+): abs (\S+) rel (\S+)$", log, re.M)
print("  Newton-Raphson residuals (GetResidual after each Generate but the first; NL_tol_abs = NL_tol_rel = 1e-6, NL_iter_max = 20):")
for n, a, rel in res:
    print("    %s: abs %s rel %s" % (n, a, rel))
last = float(res[-1][1])
print("Newton iterations: %d (residual %s: abs %.3g %s 1e-6); linear solves %d = 1 + Newton iterations; CG iterations per solve: %s, total %d"
      % (int(res[-1][0]), res[-1][0], last, "<" if last < 1e-6 else ">=", len(K), " ".join(map(str, K)), sum(K)))
opt = re.search(r"^#PETSc Option Table entries:\n(.*?)^#End of PETSc Option Table entries\n(.*?)$", log, re.M | re.S)
print("PETSc option table (-options_left): %s; %s" % (" ".join(opt.group(1).split("\n")).strip(), opt.group(2).strip()))
# The mesh (MSH 2.2): nodes, elements by type and physical region, Dirichlet nodes.
msh = open(os.path.join(d, "magnet.msh")).read()
nodes = int(re.search(r"^\$Nodes\n(\d+)", msh, re.M).group(1))
el = re.search(r"^\$Elements\n\d+\n(.*?)^\$EndElements", msh, re.M | re.S).group(1).split("\n")
bytype = collections.Counter()
byphys = collections.Counter()
dirichlet = set()
for l in el:
    f = l.split()
    if not f:
        continue
    t, ntag, phys = int(f[1]), int(f[2]), int(f[3])
    bytype[t] += 1
    byphys[(t, phys)] += 1
    if phys == 105:
        dirichlet.update(f[3 + ntag:])
names = dict((int(b), c) for a, b, c in re.findall(r"^(\d) (\d+) \"([^\"]*)\"$", msh, re.M))
print("mesh magnet.msh (MSH 2.2, shipped): %d nodes, %d triangles (%s), %d boundary lines (%s)"
      % (nodes, bytype[2], ", ".join("%s %d" % (names[p], c) for (t, p), c in sorted(byphys.items()) if t == 2),
         bytype[1], ", ".join("%s %d" % (names[p], c) for (t, p), c in sorted(byphys.items()) if t == 1)))
print("degrees of freedom: %d nodes - %d nodes on the exterior boundary (a_z = 0) = %d (GetDP: %s)"
      % (nodes, len(dirichlet), nodes - len(dirichlet), " ".join(dofs)))
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if not bins:
    print("(no DUMPI files: per-call truth from the decoder only for DUMPI runs)")
    sys.exit(0)
np_ = len(bins)
print("ranks: %d (GetDP's log: %d)" % (np_, nlog))
calls = {}
thread = collections.Counter()
anysrc = collections.Counter()
setup = collections.Counter()      # (src, dst) -> MPI_Isend (scatter set-up)
halo = collections.Counter()       # (src, dst) -> persistent sends started (halo exchanges)
segs = {}
orphan = {}
t0 = tfin = None
times0 = []
for r, b in enumerate(bins):
    txt = subprocess.run([d2a, b], check=True, capture_output=True, text=True).stdout
    calls[r] = 0
    live, pers = collections.Counter(), {}   # DUMPI can give several live requests one number
    seg = [collections.Counter()]
    orphan[r] = 0
    for blk in re.split(r"\n(?=MPI_\w+ entering)", txt):
        m = re.match(r"(MPI_\w+) entering at walltime ([\d.]+), cputime \S+ seconds in thread (\d+)", blk)
        if not m:
            continue
        f, t, th = m.group(1), float(m.group(2)), int(m.group(3))
        calls[r] += 1
        if th != 0:
            thread[(r, f)] += 1
        if r == 0 and f == "MPI_Init":
            t0 = float(re.search(r"MPI_Init returning at walltime ([\d.]+)", blk).group(1))
        if r == 0 and f == "MPI_Finalize":
            tfin = t - t0
        ints = dict(re.findall(r"\bint (\w+)=(-?\d+)", blk))
        req = re.search(r"MPI_Request request=\[(-?\d+)\]", blk)
        reqs = re.search(r"MPI_Request requests\[\d+\]=\[([^\]]*)\]", blk)
        reqs = [int(x) for x in reqs.group(1).split(",")] if reqs else []
        if f == "MPI_Group_translate_ranks":
            # The halo scatter of a freshly assembled matrix is being set up: one per Generate.
            seg.append(collections.Counter())
            if r == 0:
                times0.append([t - t0])
        if f in ("MPI_Isend", "MPI_Irecv"):
            live[int(req.group(1))] += 1
            pers.pop(int(req.group(1)), None)
            if f == "MPI_Isend":
                setup[(r, int(ints["dest"]))] += 1
            elif ints["source"] == "-1":
                anysrc[r] += 1
        elif f in ("MPI_Send_init", "MPI_Recv_init"):
            pers[int(req.group(1))] = int(ints["dest"]) if f == "MPI_Send_init" else None
            if f == "MPI_Recv_init" and ints["source"] == "-1":
                anysrc[r] += 1
        elif f == "MPI_Request_free":
            pers.pop(int(req.group(1)), None)
        elif f == "MPI_Startall":
            dests = [pers[q] for q in reqs if pers.get(q) is not None]
            for dst in dests:
                halo[(r, dst)] += 1
            if dests:
                seg[-1]["halo"] += 1
                if r == 0 and times0:
                    times0[-1].append(t - t0)
        elif f in ("MPI_Waitall", "MPI_Wait", "MPI_Waitany", "MPI_Waitsome", "MPI_Testall", "MPI_Test"):
            for q in reqs + ([int(req.group(1))] if req else []):
                if live[q] > 0:
                    live[q] -= 1
                elif q not in pers and q >= 0:
                    # a request no recorded call made: PETSc's MPI_Iallgatherv (the solution
                    # gathered on every rank), which neither tracer wraps
                    orphan[r] += 1
                    seg[-1]["orphan"] += 1
        elif f in ("MPI_Recv", "MPI_Probe", "MPI_Iprobe") and ints.get("source") == "-1":
            anysrc[r] += 1
        if f == "MPI_Allreduce" and ints.get("count") == "1":
            seg[-1]["allreduce1"] += 1
    segs[r] = seg
print("MPI calls per rank (dumpi2ascii): %s" % " ".join("%d:%d" % kv for kv in calls.items()))
print("segments per rank: a segment starts when the matrix just assembled by a Generate sets up its halo scatter")
print("(MPI_Group_translate_ranks, then PetscCommBuildTwoSided: MPI_Irecv from MPI_ANY_SOURCE, MPI_Isend);")
print("segment 1 = Generate 1 + solve 1, segment i = Generate i + GetResidual + solve i (i = 2 .. %d), segment %d = Generate %d + GetResidual."
      % (len(K), len(K) + 1, len(K) + 1))
exp = [K[0]] + [k + 1 for k in K[1:]] + [1]
print("halo exchanges per segment (an MPI_Startall of persistent sends, one per MatMult), expected K_1, K_i + 1, 1: %s"
      % " ".join(map(str, exp)))
ok = True
for r in range(np_):
    h = [s["halo"] for s in segs[r][1:]]
    a = [s["allreduce1"] for s in segs[r][1:]]
    o = [s["orphan"] for s in segs[r][1:]]
    ok = ok and h == exp
    print("  rank %d: halo exchanges %s; MPI_Allreduce(count=1) - 3 K %s; waits on unrecorded requests %s"
          % (r, " ".join(map(str, h)), " ".join(str(x - 3 * k) for x, k in zip(a, K + [0])), " ".join(map(str, o))))
print("halo exchanges per segment = K_1, K_i + 1, 1 on every rank: %s (total per rank %d = sum K + GetResiduals = %d + %d)"
      % ("yes" if ok else "NO", sum(s["halo"] for s in segs[0]), sum(K), len(res)))
print("rank 0, seconds after MPI_Init returned (DUMPI walltime): per segment, the scatter set-up, then the first and last halo exchange:")
for i, ts in enumerate(times0):
    what = "Generate 1 + solve 1" if i == 0 else ("Generate %d + GetResidual + solve %d" % (i + 1, i + 1) if i < len(K) else "Generate %d + GetResidual" % (i + 1))
    print("  segment %d (%s): set-up %.3f, halo exchanges %.3f .. %.3f" % (i + 1, what, ts[0], ts[1], ts[-1]))
print("rank 0: MPI_Finalize at %.3f" % tfin)
print("calls outside the main thread: %d %s" % (sum(thread.values()), dict(thread) if thread else ""))
print("receives with MPI_ANY_SOURCE (MPI_Irecv of PetscCommBuildTwoSided, per rank): %s"
      % " ".join("%d:%d" % (r, anysrc[r]) for r in range(np_)))
print("waits (MPI_Waitall) on requests no recorded call made (PETSc's MPI_Iallgatherv, unwrapped by DUMPI), per rank: %s"
      % " ".join("%d:%d" % kv for kv in orphan.items()))
print("point-to-point messages per pair src->dst: halo sends started (MPI_Send_init requests in MPI_Startall) / set-up MPI_Isend:")
for s in range(np_):
    print("  " + "  ".join("%d->%d %d/%d" % (s, t, halo[(s, t)], setup[(s, t)]) for t in range(np_) if t != s))
edges = sorted({(min(s, t), max(s, t)) for (s, t) in list(halo) + list(setup)})
print("process graph (undirected, a message either way): %d edges of %d possible: %s"
      % (len(edges), np_ * (np_ - 1) // 2, " ".join("%d-%d" % e for e in edges)))
EOF

runs="getdp-4 getdp-4-otf2 getdp-4-rankfile getdp-8"
for name in $runs; do
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    dir=$out/$name
    if [ -e "$dir" ]; then echo "getdp.sh: $name exists, skipped" >&2; continue; fi
    np=4
    case $name in getdp-8*) np=8 ;; esac
    set --
    for f in magnet.pro magnet_data.pro Lib_Materials.pro Lib_Magnetostatics_a_phi.pro magnet.msh; do
        set -- "$@" --input "$build/$f"
    done
    case $name in *-otf2) set -- "$@" --otf2 ;; esac
    case $name in *-rankfile)
        # rank i on core (NP - 1 - i) mod cores: the placement changes, not the numbering. Bound
        # two to a core, Open MPI's busy polling would starve the peer (examl.sh): yield when idle.
        "$rec/reverse-rankfile.sh" "$np" "$build/rankfile"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile" --mpirun-opt --report-bindings \
            --mpirun-opt "--mca mpi_yield_when_idle 1" ;;
    esac
    echo "==> $name" >&2
    if ! timeout 300 nice "$rec/record.sh" "$dir" "$np" "$@" -- "$prog" magnet.pro -msh magnet.msh \
            -setnumber Flag_NL 1 -solve Magnetostatics_a -v 5 -p 0 -ksp_type cg -pc_type jacobi \
            -ksp_rtol 1e-10 -ksp_converged_reason -skip_petscrc -options_left < /dev/null; then
        mv "$dir" "$build/failed-$name" 2>/dev/null || true
        echo "getdp.sh: $name failed" >&2; exit 1
    fi
    case $name in *-rankfile) cp "$build/rankfile" "$dir/rankfile" ;; esac
    {
        echo "package: getdp $(dpkg-query -W -f='${Version}' getdp 2>/dev/null), libpetsc-real3.18 $(dpkg-query -W -f='${Version}' libpetsc-real3.18 2>/dev/null), libslepc-real3.18 $(dpkg-query -W -f='${Version}' libslepc-real3.18 2>/dev/null)"
        echo "program: $prog (sha256 $(sha256sum "$prog" | cut -d' ' -f1)), unchanged; $("$prog" -info 2>&1 | grep -E '^(Version|Build options|PETSc version)' | sed 's/  */ /g' | paste -sd';' -)"
        echo "input: magnet.pro = $ex/demos/magnet.pro with its two Include lines pointing at the same folder (was ../templates/); magnet_data.pro, magnet.msh from $ex/demos; Lib_Materials.pro, Lib_Magnetostatics_a_phi.pro from $ex/templates; environment: PETSC_OPTIONS unset"
    } >> "$dir/versions.txt"
    [ "$(grep -c '^Linear solve converged due to CONVERGED_RTOL' "$dir/stdout.txt")" = 8 ] || { echo "getdp.sh: $name: not 8 converged linear solves in stdout.txt" >&2; exit 1; }
    # The Newton loop stopped on its absolute tolerance (GetDP colours these lines: no ^ anchor).
    awk '/Residual [0-9]+: abs / { for (i = 1; i < NF; i++) if ($i == "abs") r = $(i + 1) }
         END { exit !(r != "" && r + 0 < 1e-6) }' "$dir/stdout.txt" || { echo "getdp.sh: $name: the Newton loop did not reach abs residual < 1e-6" >&2; exit 1; }
    grep -q '^There are no unused options' "$dir/stdout.txt" || { echo "getdp.sh: $name: PETSc left options unused" >&2; exit 1; }
    "$rec/expected-counts.sh" "$dir"
    python3 "$build/truth.py" "$dir" "$d2a" > "$dir/expected/truth.txt"
    "$rec/pack.sh" "$dir"
    echo "recorded $dir ($(du -sh "$dir" | cut -f1))" >&2
done
# Pairs whose compare verdict is known from the program: the same case under another tracer or
# another placement is similar (the same calls in the same order; only the timing and the CG's
# last digits, hence an iteration more or less, can move). 4 against 8 ranks: the same program
# on twice the row blocks; no verdict is claimed.
cat > "$out/getdp-pairs.txt" <<'PAIRS'
# A B expected
getdp-4 getdp-4-otf2 similar
getdp-4 getdp-4-rankfile similar
PAIRS
echo "getdp.sh: runs in $out; check them with: tools/record/check-heldout.py $out getdp-..." >&2
