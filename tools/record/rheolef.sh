#!/bin/sh
# Records Rheolef (the C++ finite element library of P. Saramito, Debian's `rheolef` 7.2, built
# distributed: `rheolef-config --is-distributed` says true; MPI through boost::mpi, meshes
# partitioned by PT-Scotch, sparse direct solves by MUMPS 5.5) as held-out runs, kept OUTSIDE the
# repository and never used to tune anything (docs/corpus.md, "Held-out check"): the example
# p_laplacian_newton.cc that the package ships (/usr/share/doc/rheolef-doc/examples), compiled
# unchanged with `rheolef-config` as the examples' Makefile does, on Open MPI with SST DUMPI
# preloaded (C and Fortran bindings: MUMPS is Fortran) or with tools/otf2-tracer. Nothing is
# downloaded. `apt-get install -y --no-install-recommends rheolef` (52 packages; with the
# recommends it is 247). From the repository root:
#
#   tools/record/rheolef.sh [OUT_ROOT [RUN...]]      (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT rheolef-...  (OUT_ROOT/rheolef-pairs.txt lists pairs
#                                                      with their expected compare verdict)
#
# The case: the p-Laplacian -div(|grad u|^(p-2) grad u) = 1 on the unit square, u = 0 on the
# boundary, p = 2.5, P1 (bilinear) elements on a 12 x 12 grid of quadrangles (`mkgeo_grid -q 12`:
# 169 nodes, 144 quadrangles, 312 edges; written here as square12.geo), solved by Newton's method
# to the example's default tolerance 1e5 * DBL_EPSILON = 2.22e-11:
# `mpirun -np 4 p_laplacian_newton square12.geo P1 2.5 > stdout.txt` (the solution field on
# stdout, the Newton log on stderr). Newton converges quadratically in 5 steps (residuals 0.49,
# 0.11, 4e-3, 1.8e-5, 4.8e-10, ~4e-15). Quadrangles, not triangles: on `mkgeo_grid -t` the corner
# triangles have all three vertices on the boundary, |grad u| = 0 there and the example stops
# with "eta': division by zero". The mesh is this small because Rheolef calls MPI_Comm_rank
# some 300 times per element and assembly (DUMPI records every call: 770 000 of the 900 000
# calls of a 4-rank run; a 60 x 60 grid gave 16 million calls and 555 MB).
#
# SCOTCH_PTHREAD_NUMBER=1 (exported to the ranks, every run): PT-Scotch 7 otherwise folds the
# distributed graph on a second thread that makes MPI calls of its own (MPI_THREAD_MULTIPLE:
# Allgather, Allreduce, Alltoallv, Waitall), and tools/otf2-tracer, one event writer per rank,
# then aborts its trace ("Passed timestamp is smaller than last written one", otf2-print reads
# 1315 events). With it every MPI call is on the main thread (truth.txt checks that for DUMPI).
#
# What Rheolef does in MPI (as the trace shows it; times are rank 0's in rheolef-4, counted from
# MPI_Init_thread's return, which takes 0.38 s; they vary by a third from run to run on a loaded
# 2-core machine; the program prints no timings):
#   set-up (0 to 0.50 s): rank 0 reads the mesh and distributes it (MPI_Bcast of the header,
#     MPI_Send of each chunk to every rank, tags 0, 2, 3, ...), PT-Scotch partitions it on a
#     communicator of its own (MPI_Comm_split, MPI_Comm_dup; Isend/Irecv tags 401-406 between
#     graph neighbours, Allgather, Alltoall(v), Allreduce, Scatterv), then the distributed arrays
#     of the mesh and of the P1 space are numbered and assembled: rheolef's dis_array assembly
#     is an MPI_Allreduce of how many messages each rank gets, MPI_Irecv from MPI_ANY_SOURCE
#     posted that many times, MPI_Isend to the owners, MPI_Test/MPI_Waitany until done, on
#     MPI_COMM_WORLD with a fresh tag per exchange (the tag counter climbs through the run);
#     the scatter plans for ghost values are set up with Bcast/Allgather/Alltoall and used with
#     named-source Irecv/Isend between neighbouring parts.
#   two factorizations (0.50 to 0.74 s): the mass matrix m (for the dual norm) and the Poisson
#     problem of the initial guess, each a MUMPS instance: three MPI_Comm_dup (the first of
#     MPI_COMM_WORLD) and an MPI_Comm_split (JOB=-1), then analysis and factorization (MPI_Bcast
#     and MPI_Reduce, Send/Isend/Recv with MPI_Probe/MPI_Iprobe on MPI_ANY_SOURCE between all
#     ranks, Pack/Unpack), each MUMPS call bracketed by an MPI_Comm_dup/MPI_Comm_free; the
#     Poisson problem is solved and its instance destroyed (three MPI_Comm_free).
#   Newton loop (0.74 to 2.64 s, 5 steps of about 0.35 s, then the 6th residual): each step
#     assembles the residual (the dis_array exchange above, ~25 MPI_Allreduce for dot products
#     and sizes), takes its dual norm (a MUMPS solve with m), assembles the Jacobian form, makes
#     a new MUMPS instance and factorizes it (the previous Jacobian's instance freed after it),
#     and solves for the correction. Rank 0's MUMPS instances start at 0.50, 0.67, 1.06, 1.45,
#     1.80, 2.09, 2.43 s; MPI_Finalize at 2.64 s. The assembly in between is local
#     computation (and the MPI_Comm_rank calls), so most of a step is outside MPI.
# Every pair of ranks exchanges messages, with 4 ranks and with 8: MUMPS links all of them;
# rheolef's own traffic on MPI_COMM_WORLD is heavier between neighbouring parts (truth.txt).
#
# The truth, independently of tracelogic (expected/truth.txt): from the program's own log
# (stderr.txt) the Newton table (n, residual): N = the last n = 5 Newton steps, N + 1 = 6
# residuals; from the mesh file the nodes and elements; from stdout.txt the size of the solution
# field (169 degrees of freedom); from the program's structure the factorizations (2 + N = 7
# MUMPS instances: m, the Poisson problem, one Jacobian per step) and the solves (1 + (N + 1) +
# N = 12); from the decoder (dumpi2ascii; DUMPI runs only): the MUMPS instances per rank (the
# MPI_Comm_split of a communicator made by MPI_Comm_dup; PT-Scotch splits MPI_COMM_WORLD, and
# with 8 ranks splits that again; 7 expected), rank 0's instance start times,
# calls outside the main thread (0), MPI_ANY_SOURCE receives and probes, and the messages per
# pair of ranks, on MPI_COMM_WORLD and on the other communicators.
#
# Runs: rheolef-4 (4 ranks, DUMPI), rheolef-4-otf2 (the same with the OTF2 tracer),
# rheolef-4-rankfile (4 ranks placed in reverse order on the cores by an Open MPI rankfile, kept
# as RUN/rankfile), rheolef-8 (8 ranks on 2 cores, oversubscribed). A run's folder: command.txt,
# versions.txt, square12.geo, stdout.txt (the solution field), stderr.txt (the Newton log), the
# trace (dumpi.tar.zst, or trace.tar.zst for OTF2: trace/ packed) and expected/: the decoders'
# counts (expected-counts.sh) and truth.txt. The program is compiled into a temporary folder
# (its path is in command.txt; versions.txt has its compile command and sha256).
#
# Needs rheolef (and its g++ toolchain), Open MPI, SST DUMPI with the Fortran bindings
# (DUMPI_PREFIX, default /opt/dumpi), the OTF2 tracer (OTF2_TRACER), otf2-print, python3 and
# zstd. Compiling takes ~40 s; each run 2 to 5 s on 2 cores (DUMPI: 31 MB for 4 ranks, 40 MB for
# 8, 9 and 12 MB packed; OTF2 1.5 MB, 0.4 MB packed: the OTF2 tracer does not record
# MPI_Comm_rank/size, MPI_Pack, datatype calls).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
command -v rheolef-config >/dev/null || { echo "rheolef.sh: rheolef is missing (apt-get install -y --no-install-recommends rheolef)" >&2; exit 1; }
[ "$(rheolef-config --is-distributed)" = true ] || { echo "rheolef.sh: this rheolef is not built distributed" >&2; exit 1; }
ex=$(rheolef-config --exampledir 2>/dev/null || echo /usr/share/doc/rheolef-doc/examples)
[ -f "$ex/p_laplacian_newton.cc" ] || ex=/usr/share/doc/rheolef-doc/examples
[ -f "$ex/p_laplacian_newton.cc" ] || { echo "rheolef.sh: $ex/p_laplacian_newton.cc missing (rheolef-doc)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d /tmp/rheolef-build.XXXXXX)
trap 'rm -rf "$build"' EXIT

# The example, unchanged, with the files it includes; compiled as the examples' Makefile does
# ($(INCLUDES_RHEOLEF), $(LIBS_RHEOLEF) of rheolef.mk are rheolef-config's --includes, --libs).
for f in p_laplacian_newton.cc p_laplacian.h p_laplacian1.icc p_laplacian2.icc eta.h nu.h dirichlet.icc; do
    cp "$ex/$f" "$build/"
done
cxx="$(rheolef-config --cxx) $(rheolef-config --includes) p_laplacian_newton.cc -o p_laplacian_newton $(rheolef-config --libs)"
echo "rheolef.sh: compiling p_laplacian_newton (~40 s)" >&2
# shellcheck disable=SC2086
(cd "$build" && nice $cxx)
prog=$build/p_laplacian_newton
(cd "$build" && mkgeo_grid -q 12 > square12.geo)

cat > "$build/truth.py" <<'EOF'
import collections, glob, os, re, subprocess, sys
d, d2a = sys.argv[1], sys.argv[2]
err = open(os.path.join(d, "stderr.txt")).read()
print("Rheolef's log (stderr.txt):")
for l in err.splitlines():
    if l.startswith("#") or l.startswith("!"):
        print("  " + l)
newton = [(int(a), float(b)) for a, b in re.findall(r"^(\d+) (\S+)$", err, re.M)]
for n, r in newton:
    print("  %d %g" % (n, r))
tol = float(re.search(r"^# tol = (\S+)", err, re.M).group(1))
N = newton[-1][0]
print("Newton: %d steps, %d residual evaluations, last residual %g %s tol %g"
      % (N, N + 1, newton[-1][1], "<=" if newton[-1][1] <= tol else ">", tol))
geo = open(os.path.join(d, "square12.geo")).read()
hdr = dict((k, int(v)) for k, v in re.findall(r"^\s*(nodes|quadrangles|triangles|edges)\s+(\d+)", geo, re.M))
print("mesh square12.geo (mkgeo_grid -q 12): %s" % ", ".join("%s %d" % kv for kv in hdr.items()))
so = open(os.path.join(d, "stdout.txt")).read().split("\n")
i = so.index("field")
ndof = int(so[i + 1].split()[1])
print("solution field (stdout.txt): %d degrees of freedom, %s on %s (nodes: %d)" % (ndof, so[i + 3], so[i + 2], hdr["nodes"]))
print("from the program's structure: MUMPS instances (factorizations) 2 + N = %d; linear solves 1 + (N+1) + N = %d"
      % (2 + N, 2 * N + 2))
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if not bins:
    print("(no DUMPI files: per-rank truth from the decoder only for DUMPI runs)")
    sys.exit(0)
np_ = len(bins)
pairs = collections.Counter()
anysrc = collections.Counter()
inst = {}
t0 = None
times0 = []
thread = collections.Counter()
for r, b in enumerate(bins):
    txt = subprocess.run([d2a, b], check=True, capture_output=True, text=True).stdout
    inst[r] = 0
    made = {}
    for blk in re.split(r"\n(?=MPI_\w+ entering)", txt):
        m = re.match(r"(MPI_\w+) entering at walltime ([\d.]+), cputime \S+ seconds in thread (\d+)", blk)
        if not m:
            continue
        f, t, th = m.group(1), float(m.group(2)), int(m.group(3))
        if th != 0:
            thread[(r, f)] += 1
        if r == 0 and f == "MPI_Init_thread":
            t0 = float(re.search(r"MPI_Init_thread returning at walltime ([\d.]+)", blk).group(1))
        if f in ("MPI_Comm_dup", "MPI_Comm_split"):
            old = int(re.search(r"oldcomm=(\d+)", blk).group(1))
            new = int(re.search(r"newcomm=(\d+)", blk).group(1))
            # A MUMPS instance (JOB=-1) splits a duplicate of MPI_COMM_WORLD; PT-Scotch splits
            # MPI_COMM_WORLD, and with 8 ranks splits that split again (folding).
            if f == "MPI_Comm_split" and made.get(old) == "dup":
                inst[r] += 1
                if r == 0:
                    times0.append(t - t0)
            made[new] = "dup" if f == "MPI_Comm_dup" else "split"
            continue
        if r == 0 and f == "MPI_Finalize":
            tfin = t - t0
        ints = dict(re.findall(r"\bint (\w+)=(-?\d+)", blk))
        c = re.search(r"comm=\d+ \(([^)]*)\)", blk)
        world = "world" if c and c.group(1) == "MPI_COMM_WORLD" else "other"
        if f in ("MPI_Send", "MPI_Isend"):
            pairs[(r, int(ints["dest"]), world)] += 1
        elif f in ("MPI_Recv", "MPI_Irecv", "MPI_Probe", "MPI_Iprobe") and ints.get("source") == "-1":
            anysrc[(f, world)] += 1
print("ranks: %d" % np_)
print("MUMPS instances per rank (MPI_Comm_split of a communicator made by MPI_Comm_dup): %s (expected %d)"
      % (" ".join("%d:%d" % kv for kv in inst.items()), 2 + N))
print("rank 0, seconds after MPI_Init_thread returned: MUMPS instances start at %s; MPI_Finalize at %.2f"
      % (" ".join("%.2f" % t for t in times0), tfin))
print("calls outside the main thread: %d %s" % (sum(thread.values()), dict(thread) if thread else ""))
print("receives/probes with MPI_ANY_SOURCE (all ranks): %s"
      % ", ".join("%s on %s %d" % (f, w, c) for (f, w), c in sorted(anysrc.items())))
print("point-to-point messages (Send/Isend) per pair src->dst, on MPI_COMM_WORLD (rheolef) / other communicators (MUMPS, PT-Scotch):")
for s in range(np_):
    print("  " + "  ".join("%d->%d %d/%d" % (s, t, pairs[(s, t, "world")], pairs[(s, t, "other")])
                           for t in range(np_) if t != s))
edges = sorted({(min(s, t), max(s, t)) for (s, t, w) in pairs})
print("process graph (undirected, a message either way): %d edges of %d possible: %s"
      % (len(edges), np_ * (np_ - 1) // 2, " ".join("%d-%d" % e for e in edges)))
EOF

runs="rheolef-4 rheolef-4-otf2 rheolef-4-rankfile rheolef-8"
for name in $runs; do
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    dir=$out/$name
    if [ -e "$dir" ]; then echo "rheolef.sh: $name exists, skipped" >&2; continue; fi
    np=4
    case $name in rheolef-8*) np=8 ;; esac
    set -- --input "$build/square12.geo" --fortran --mpirun-opt "-x SCOTCH_PTHREAD_NUMBER=1"
    case $name in *-otf2) set -- "$@" --otf2 ;; esac
    case $name in *-rankfile)
        # rank i on core (NP - 1 - i) mod cores: the placement changes, not the numbering. Bound
        # two to a core, Open MPI's busy polling would starve the peer (examl.sh): yield when idle.
        "$rec/reverse-rankfile.sh" "$np" "$build/rankfile"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile" --mpirun-opt --report-bindings \
            --mpirun-opt "--mca mpi_yield_when_idle 1" ;;
    esac
    echo "==> $name" >&2
    if ! timeout 300 "$rec/record.sh" "$dir" "$np" "$@" -- "$prog" square12.geo P1 2.5 < /dev/null; then
        mv "$dir" "$build/failed-$name" 2>/dev/null || true
        echo "rheolef.sh: $name failed" >&2; exit 1
    fi
    case $name in *-rankfile) cp "$build/rankfile" "$dir/rankfile" ;; esac
    {
        echo "package: rheolef $(dpkg-query -W -f='${Version}' rheolef 2>/dev/null), librheolef1 $(dpkg-query -W -f='${Version}' librheolef1 2>/dev/null), rheolef-doc $(dpkg-query -W -f='${Version}' rheolef-doc 2>/dev/null)"
        echo "package: libmumps-ptscotch-5.5 $(dpkg-query -W -f='${Version}' libmumps-ptscotch-5.5 2>/dev/null), libptscotch-7.0 $(dpkg-query -W -f='${Version}' libptscotch-7.0 2>/dev/null), libboost-mpi1.74.0 $(dpkg-query -W -f='${Version}' libboost-mpi1.74.0 2>/dev/null)"
        echo "program: $ex/p_laplacian_newton.cc, unchanged, compiled as: $cxx"
        echo "program sha256: $(sha256sum "$prog" | cut -d' ' -f1)"
        echo "input: square12.geo from 'mkgeo_grid -q 12' (rheolef); environment SCOTCH_PTHREAD_NUMBER=1"
    } >> "$dir/versions.txt"
    grep -q '^field' "$dir/stdout.txt" || { echo "rheolef.sh: $name: no solution field in stdout.txt" >&2; exit 1; }
    grep -q '^# n r' "$dir/stderr.txt" || { echo "rheolef.sh: $name: no Newton log in stderr.txt" >&2; exit 1; }
    "$rec/expected-counts.sh" "$dir"
    python3 "$build/truth.py" "$dir" "$d2a" > "$dir/expected/truth.txt"
    # Packed as mplrs.sh does (DUMPI: 31 MB for 4 ranks, mostly MPI_Comm_rank records).
    "$rec/pack.sh" "$dir"
    echo "recorded $dir ($(du -sh "$dir" | cut -f1))" >&2
done
# Pairs whose compare verdict is known from the program: the same case under another tracer or
# another placement is similar (the collectives are the same call for call; the polling calls,
# MPI_ANY_SOURCE matching and MUMPS's dynamic message order vary a little). 4 against 8 ranks:
# the same program on twice the parts; no verdict is claimed.
cat > "$out/rheolef-pairs.txt" <<'PAIRS'
# A B expected
rheolef-4 rheolef-4-otf2 similar
rheolef-4 rheolef-4-rankfile similar
PAIRS
echo "rheolef.sh: runs in $out; check them with: tools/record/check-heldout.py $out rheolef-..." >&2
