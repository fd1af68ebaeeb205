#!/bin/bash
# Records FreeFem++ (4.11 as Debian ships it: `apt-get install -y freefem++ libfreefem++
# freefem++-doc`; the binary says "v4.9") as held-out runs, kept OUTSIDE the repository and never
# used to tune anything (docs/corpus.md, "Held-out check"): Debian's /usr/bin/FreeFem++-mpi,
# unchanged, on Open MPI, with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned
# tracelogic for FreeFem++. From the repository root:
#
#   tools/record/freefem.sh [OUT_ROOT [RUN...]]        (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT freefem-...  (one table)
#
# The script is the package's example MPICGLap.edp (/usr/share/doc/freefem++/examples/mpi,
# freefem++-doc), the only shipped MPI example that runs here: the DDM-Schwarz-*, MPIGMRES* and
# parmetis examples include .idp files (getARGV.idp, DDM-Schwarz-macro.idp, DDM-funcs-v2.idp,
# MPIplot.idp) that no Debian package ships, the MUMPS ones need MUMPS_mpi.so (not built), the
# schwarz-*.edp ones stop unless mpisize == 2. Debian's /etc/freefem++.pref points the load path
# at /usr/lib/ff++/4.9/lib (absent); FF_LOADPATH=/usr/lib/freefem++/mpi;/usr/lib/freefem++ finds
# the plugin MPICG.so. MPICGLap.edp does two things:
#   1. MPILinearCG on mpiCommWorld (every rank): a diagonal system, 3 unknowns per rank
#      (u[i] -> (10*mpirank + i + 1)*u[i]), b = 1, eps 1e-6, at most 20 iterations, identity
#      preconditioner; each rank prints "LinearCG (Linear)  err=...". Its iteration count is not
#      printed.
#   2. On a communicator of ranks 0 and 1 only (mpiGroup [0,1]; the other ranks skip it): a
#      two-subdomain overlapping-free Schwarz problem solved by MPIAffineCG (eps 1e-4, at most 200
#      iterations): rank 0 holds square(N,N) on [0,1]x[0,1], rank 1 square(N,N) on [1,2]x[0,1];
#      the interface x = 1 carries N+1 P1 dofs; every CG iteration each of the two ranks sends the
#      other its N+1 interface values twice (projD in the preconditioner, projC in the operator:
#      `processor(1-rank,comm) << ...; >> ...`). FreeFem prints "CG:49 ..." and "CG converges K".
#      Then rank 0 receives rank 1's solution (Plot), solves the whole problem alone and prints
#      " err = ...".
# CASE is:
#   cg      MPICGLap.edp unchanged (N = 4: square(4,4), 5 interface dofs)
#   cgfine  a copy with line 42 `square(4,4,` changed to `square(12,12,` (N = 12, 13 interface dofs)
# Runs are named freefem-CASE-NP[-otf2][-rankfile], DUMPI unless -otf2, -rankfile under the
# rankfile of runs.sh (kept as RUN/rankfile, stderr.txt has --report-bindings).
# FreeFem++-mpi runs with -nw (no graphics) and -v 0 is NOT used (the default verbosity prints the
# script echo and the CG lines). mpirun's --output-filename ranks-out keeps each rank's stdout
# apart (ranks-out/1/rank.R/stdout). The output lines are NOT dated: with the iotimes shim
# (IOTIMES_STDOUT_LINES=1) FreeFem's output logged nothing, and with IOTIMES_WRITES=1 alone the
# logged offsets of rank 0 stop at 1673 of its 6793 bytes (the script echo and the C++ stream
# leave by different paths), so log-times.py cannot place the lines.
#
# A run's folder: command.txt, versions.txt, the input .edp, stdout.txt (all ranks, interleaved),
# ranks-out/ (each rank's own stdout), the trace packed (dumpi.tar.zst or trace.tar.zst) and
# expected/:
#   freefem-truth.txt   from the script's source and the ranks' own output: who holds which
#                       subdomain, the neighbour pairs, the interface size, the CG iterations
#   dumpi2ascii-*.txt / otf2-print-*.txt  the decoders' counts (tools/record/expected-counts.sh)
# and OUT_ROOT/freefem-pairs.txt lists pairs with their expected `compare` verdict.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
ex=/usr/share/doc/freefem++/examples/mpi/MPICGLap.edp
{ [ -x /usr/bin/FreeFem++-mpi ] && [ -f "$ex" ] && [ -f /usr/lib/freefem++/mpi/MPICG.so ]; } ||
    { echo "freefem.sh: FreeFem++ is missing (apt-get install -y freefem++ libfreefem++ freefem++-doc)" >&2; exit 1; }

runs="freefem-cg-4 freefem-cg-4-rankfile freefem-cg-8 freefem-cg-8-otf2 freefem-cgfine-4"
select_runs freefem

build_dir freefem
fail() { echo "freefem.sh: $1" >&2; exit 1; }
cp "$ex" "$build/MPICGLap.edp"
sed 's/square(4,4,/square(12,12,/' "$ex" > "$build/MPICGLap-fine.edp"
grep -q 'square(12,12,' "$build/MPICGLap-fine.edp" || fail "editing the mesh size failed"

# The truth: N NP RUN_DIR, on stdout.
cat > "$build/truth.py" <<'EOF'
import glob, re, sys
n, np_, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def out(r):
    f = glob.glob("%s/ranks-out/*/rank.%d/stdout" % (d, r))
    if len(f) != 1: sys.exit("freefem.sh: truth: no stdout of rank %d" % r)
    return open(f[0], errors="replace").read().splitlines()
print("# From MPICGLap.edp's source and each rank's own output (ranks-out/); freefem.sh.")
print("ranks: %d; MPILinearCG on mpiCommWorld (all ranks, 3 unknowns each); Schwarz CG on comm {0,1}" % np_)
print("rank 0: subdomain square(%d,%d) on [0,1]x[0,1]; neighbour 1" % (n, n))
print("rank 1: subdomain square(%d,%d) on [1,2]x[0,1]; neighbour 0" % (n, n))
for r in range(2, np_):
    print("rank %d: no subdomain (only MPILinearCG and the group/communicator creation)" % r)
print("neighbour pairs (point-to-point): 0-1")
for r in range(np_):
    o = out(r)
    lin = [l.strip() for l in o if l.startswith("LinearCG")]
    conv = [l.strip() for l in o if l.startswith("CG converges") or l.startswith("CG:")]
    mesh = [l.strip() for l in o if "Square mesh" in l]
    nnz = [o[i + 2].split()[2] for i, l in enumerate(o) if re.match(r"^\d+ Ihi = ", l)]
    err = [l.strip() for l in o if l.startswith(" err =")]
    print("rank %d output: %s" % (r, "; ".join(lin + mesh + ["interface dofs (Ihi nnz) " + x for x in nnz] + conv + err)))
    if r < 2 and not any(l.startswith("CG converges") for l in conv):
        sys.exit("freefem.sh: truth: rank %d has no 'CG converges'" % r)
    if r < 2 and nnz != [str(n + 1)]:
        sys.exit("freefem.sh: truth: rank %d interface dofs %s, not %d" % (r, nnz, n + 1))
k = [int(l.split()[2]) for l in out(0) if l.startswith("CG converges")][0]
print("Schwarz CG iterations: %d (CG converges %d); per iteration each of ranks 0, 1 sends the other %d reals twice (projD, projC)" % (k, k, n + 1))
EOF

for name in $todo; do
    b=${name#freefem-}                 # CASE-NP[-otf2][-rankfile]
    case_=${b%%-*}
    np=${b#*-}; np=${np%%-*}
    case $case_ in
        cg) edp=MPICGLap.edp; n=4 ;;
        cgfine) edp=MPICGLap-fine.edp; n=12 ;;
    esac
    dir=$out/$name
    set -- --input "$build/$edp" --mpirun-opt "-x FF_LOADPATH" \
        --mpirun-opt "--output-filename ranks-out"
    otf2=no
    case $name in *-otf2*) set -- "$@" --otf2; otf2=yes ;; esac
    case $name in *-rankfile)
        rankfile "$np" "$build/rankfile-$name"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile-$name" --mpirun-opt --report-bindings ;;
    esac
    echo "==> $name" >&2
    current=$dir
    FF_LOADPATH="/usr/lib/freefem++/mpi;/usr/lib/freefem++" \
        "$rec/record.sh" "$dir" "$np" "$@" -- /usr/bin/FreeFem++-mpi -nw "$edp" < /dev/null || fail "$name: record.sh failed"
    cd "$dir"
    [ "$(grep -c '^CG converges' stdout.txt)" = 2 ] || fail "$name: not 2 'CG converges' lines in stdout.txt"
    [ -s stderr.txt ] || rm -f stderr.txt
    case $name in *-rankfile) cp "$build/rankfile-$name" rankfile ;; esac
    {
        echo "package: freefem++ $(dpkg-query -W -f='${Version}' freefem++ 2>/dev/null), libfreefem++ $(dpkg-query -W -f='${Version}' libfreefem++ 2>/dev/null)"
        echo "script: $edp (from $ex$( [ "$case_" = cgfine ] && echo ', square(4,4, -> square(12,12,'))"
    } >> versions.txt
    mkdir -p expected
    python3 "$build/truth.py" "$n" "$np" . > expected/freefem-truth.txt || fail "$name: the truth failed"
    pack_run "$name" "$otf2"
done
# One script under two placements or tracers is similar; 8 ranks against 4 is the same two-rank
# exchange with 4 more idle ranks (in MPILinearCG only); a finer mesh changes the message sizes
# (13 instead of 5 interface reals) and the CG's iteration count.
cat > "$out/freefem-pairs.txt" <<'PAIRS'
# A B expected
freefem-cg-4 freefem-cg-4-rankfile similar
freefem-cg-8 freefem-cg-8-otf2 similar
freefem-cg-4 freefem-cgfine-4 different
PAIRS
echo "freefem.sh: runs in $out; check them with: tools/record/check-heldout.py $out freefem-..." >&2
