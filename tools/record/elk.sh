#!/bin/bash
# Records the Elk all-electron full-potential LAPW code (8.4.30 as Debian ships it: `apt-get
# install -y elk-lapw`) as held-out runs, kept OUTSIDE the repository and never used to tune
# anything (docs/corpus.md, "Held-out check"): Debian's binary /usr/bin/elk-lapw, unchanged, on
# Open MPI, with SST DUMPI preloaded (with its Fortran bindings: Elk is Fortran) or with
# tools/otf2-tracer. Nobody tuned tracelogic for Elk. Nothing is downloaded: the inputs are written
# here, the species files are Debian's (/usr/share/elk-lapw/species). From the repository root:
#
#   tools/record/elk.sh [OUT_ROOT [RUN...]]        (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT elk-...  (one table)
#
# Runs already present are skipped, so it can be interrupted and rerun. A run's name says what it
# is: elk-CASE-NP[-otf2][-rankfile], DUMPI unless `-otf2`, `-rankfile` under an Open MPI rankfile
# (the permutation of runs.sh's `rankfile`: the placement changes, not the numbering; kept as
# RUN/rankfile, stderr.txt has --report-bindings). Every CASE is a ground state (tasks 0) stopped
# after exactly 6 self-consistent loops (maxscl 6; neither case converges before, the script stops
# otherwise), the rest Elk's defaults. CASE is (elk.in adapted from Debian's examples/basic):
#   si   diamond Si, 2 atoms, a = 5.13 bohr fcc vectors, Broyden mixing (mixtype 3), k-point grid
#        2 x 2 x 2 offset (0.25, 0.5, 0.625): 8 k-points, 13 valence states
#   al   fcc Al, 1 atom, scale 3.8267, k-point grid 4 x 4 x 4 offset (0.5, 0.5, 0.5): 10 k-points
# Elk parallelises over k-points only: k-point ik (1-based) is solved by rank mod(ik - 1, NP), and
# its eigenvalues are then broadcast by that rank (one MPI_Bcast per k-point and SCF loop); the
# density is summed by two MPI_Allreduce per loop (muffin-tin and interstitial parts), between
# barriers. No point-to-point messages: every run is collectives only. Elk runs with
# OMP_NUM_THREADS=1 in the run's folder (elk.in names the species folder by absolute path).
# Only rank 0 writes INFO.OUT and flushes it after each loop's header "Loop number : N"; the
# iotimes shim (tools/record/iotimes.c, IOTIMES_WRITES=1 IOTIMES_MATCH=INFO.OUT) dates each of its
# write(2)s on the trace's clock.
#
# A run's folder: command.txt, versions.txt, elk.in, Elk's own text outputs (INFO.OUT, KPOINTS.OUT,
# TOTENERGY.OUT, EIGVAL.OUT, ...; the binary STATE.OUT, EVECFV.OUT and EVECSV.OUT are removed),
# stdout.txt (rank 0's few lines), iotimes*.log, the trace packed (dumpi.tar.zst or trace.tar.zst;
# the unpacked files are removed) and the truth in expected/, independently of tracelogic:
#   elk-info.txt     from INFO.OUT and KPOINTS.OUT: the system, k-points, valence states, MPI
#                    processes, SCF loops ("Loop number" lines) and how they ended; the k-points
#                    of each rank (Elk's rule above), checked against the decoder's MPI_Bcast roots
#                    in every loop (the script stops if they differ); from the decoder: whether all
#                    ranks make the same calls, and rank 0's calls per stage: set-up (before the
#                    first loop's k-point broadcasts), each SCF loop (from its first k-point
#                    broadcast to the next loop's) and the final stage (after the last loop's two
#                    MPI_Allreduce), as `MPI_Fn(root)xN` runs
#   log-times.tsv, log-calls.tsv  INFO.OUT's first flush ("Elk ... started", after the
#                    initialisation), "Self-consistent loop started", every "Loop number : N",
#                    "Self-consistent loop stopped" and "Elk ... stopped", dated on the trace's
#                    clock, and the MPI calls of all ranks between them (tools/record/log-times.py)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives (all 0)
# and OUT_ROOT/elk-pairs.txt lists pairs with their expected `compare` verdict (the format of
# check-heldout.py's pairs.txt; copy or link it as pairs.txt to check them).
#
# Needs elk-lapw 8.4.30, Open MPI (4.1.4 tested), SST DUMPI with its Fortran bindings
# (tools/record/build-dumpi.sh; DUMPI_PREFIX), the OTF2 tracer (tools/otf2-tracer/build.sh;
# OTF2_TRACER), otf2-print (apt: otf2-tools), gcc and zstd. Each run takes a few seconds on 2 cores
# (the rankfile run binds two ranks to each core and is slower).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
elk=/usr/bin/elk-lapw
species=/usr/share/elk-lapw/species
{ [ -x $elk ] && [ -f $species/Si.in ]; } || { echo "elk.sh: Elk is missing (apt-get install -y elk-lapw)" >&2; exit 1; }

runs="elk-si-2 elk-si-4 elk-si-6 elk-si-4-otf2 elk-si-4-rankfile elk-al-4"
select_runs elk

build_dir elk
fail() { echo "elk.sh: $1" >&2; exit 1; }
loops=6
gcc -shared -fPIC -O2 -o "$build/libiotimes.so" "$rec/iotimes.c" -ldl || fail "building iotimes.c failed"

# elk.in of CASE into FOLDER (see the top of this file; Elk wants a blank line after each block).
write_input() {
    mkdir -p "$2"
    case $1 in
        si) cat > "$2/elk.in" <<EOF
tasks
  0

mixtype
  3

avec
  5.13  5.13  0.00
  5.13  0.00  5.13
  0.00  5.13  5.13

sppath
  '$species/'

atoms
  1                                 : nspecies
  'Si.in'                           : spfname
  2                                 : natoms; atposl below
  0.0  0.0  0.0
  0.25 0.25 0.25

ngridk
  2  2  2

vkloff
  0.25  0.5  0.625

maxscl
  $loops

EOF
        ;;
        al) cat > "$2/elk.in" <<EOF
tasks
  0

avec
  1.0  1.0  0.0
  1.0  0.0  1.0
  0.0  1.0  1.0

scale
  3.8267

sppath
  '$species/'

atoms
  1                                   : nspecies
  'Al.in'                             : spfname
  1                                   : natoms
  0.0  0.0  0.0    0.0  0.0  0.0      : atposl, bfcmt

ngridk
  4  4  4

vkloff
  0.5  0.5  0.5

maxscl
  $loops

EOF
        ;;
    esac
}

# The truth (see the top of this file): NP LOOPS RUN_DIR, on stdout.
cat > "$build/truth.py" <<'EOF'
import glob, os, re, subprocess, sys
np_, loops_want, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def fail(m): sys.exit("elk.sh: truth: " + m)
info = open(os.path.join(d, "INFO.OUT")).read()
def one(rx):
    m = re.search(rx, info, re.M)
    if not m: fail("INFO.OUT has no " + rx)
    return m.group(1)
nkpt = int(one(r"Total number of k-points :\s+(\d+)"))
nstsv = int(one(r"Total number of valence states :\s+(\d+)"))
nproc = int(one(r"Using MPI, number of processes :\s+(\d+)"))
grid = one(r"k-point grid :\s+(.*)$").split()
natoms = int(one(r"Total number of atoms per unit cell :\s+(\d+)"))
species = re.findall(r"Species :\s+\d+ \((\w+)\)", info)
loops = [int(x) for x in re.findall(r"\| Loop number :\s+(\d+) \|", info)]
if nproc != np_: fail("INFO.OUT says %d processes, not %d" % (nproc, np_))
if loops != list(range(1, loops_want + 1)): fail("INFO.OUT's loops are %s, not 1..%d" % (loops, loops_want))
if "Reached self-consistent loops maximum" not in info: fail("the run converged before maxscl")
kl = open(os.path.join(d, "KPOINTS.OUT")).read().splitlines()
if int(kl[0].split()[0]) != nkpt: fail("KPOINTS.OUT disagrees with INFO.OUT")
print("# From INFO.OUT and KPOINTS.OUT (Elk's own outputs) and the tracer's decoder; elk.sh.")
print("system: %s, %d atoms per cell; k-point grid %s: %d k-points (KPOINTS.OUT); %d valence states (nstsv)" % (
    "+".join(species), natoms, " x ".join(grid), nkpt, nstsv))
print("MPI processes: %d (INFO.OUT)" % nproc)
print("SCF loops: %d ('Loop number' lines), ended by 'Reached self-consistent loops maximum' (maxscl %d), not converged" % (len(loops), loops_want))
print("k-point distribution (Elk: k-point ik solved and broadcast by rank mod(ik-1, NP)):")
for r in range(np_):
    ks = [k for k in range(1, nkpt + 1) if (k - 1) % np_ == r]
    print("  rank %d: %d k-points%s" % (r, len(ks), (": " + " ".join(map(str, ks))) if ks else " (idle in the k-point loop)"))
# The decoder's calls per rank: (function, root or None).
seqs = []
bins = sorted(glob.glob(os.path.join(d, "*.bin")))
if bins:
    decoder = "dumpi2ascii"
    for b in bins:
        s = []
        for line in subprocess.run(["/opt/dumpi/bin/dumpi2ascii", b], capture_output=True, text=True, check=True).stdout.splitlines():
            m = re.match(r"^(MPI_\w+) entering at walltime", line)
            if m: s.append([m.group(1), None])
            m = re.match(r"^int root=(-?\d+)", line)
            if m and s: s[-1][1] = int(m.group(1))
        seqs.append(s)
else:
    decoder = "otf2-print"
    out = subprocess.run(["otf2-print", os.path.join(d, "trace", "traces.otf2")], capture_output=True, text=True, check=True).stdout
    per = {}
    for line in out.splitlines():
        m = re.match(r'^ENTER\s+(\d+)\s+\d+\s+Region: "(MPI_\w+)"', line)
        if m: per.setdefault(int(m.group(1)), []).append([m.group(2), None])
        m = re.match(r"^MPI_COLLECTIVE_END\s+(\d+)\s.*Root: (\d+)", line)
        if m and "Operation: BCAST" in line: per[int(m.group(1))][-1][1] = int(m.group(2))
    seqs = [per[r] for r in sorted(per)]
if len(seqs) != np_: fail("%d ranks in the trace" % len(seqs))
same = all([c[0] for c in s] == [c[0] for c in seqs[0]] for s in seqs)
print("decoder (%s): %d calls per rank%s; point-to-point calls: %d" % (
    decoder, len(seqs[0]), ", the same functions in the same order on every rank" if same else " (NOT the same on every rank)",
    sum(1 for s in seqs for c in s if re.match(r"MPI_(I?[SBR]?send|Recv|Irecv|Sendrecv)", c[0]))))
# Loops in rank 0's calls: each starts with its nkpt k-point broadcasts, the last nkpt calls of a run of MPI_Bcast.
s = seqs[0]
starts, i = [], 0
while i < len(s):
    if s[i][0] == "MPI_Bcast":
        j = i
        while j < len(s) and s[j][0] == "MPI_Bcast": j += 1
        if j - i >= nkpt: starts.append(j - nkpt)
        i = j
    else:
        i += 1
if len(starts) != len(loops): fail("%d runs of %d broadcasts in rank 0's calls, %d loops" % (len(starts), nkpt, len(loops)))
want = [(k - 1) % np_ for k in range(1, nkpt + 1)]
for r, q in enumerate(seqs):
    for n, st in enumerate(starts):
        roots = [c[1] for c in q[st:st + nkpt]]
        if roots != want: fail("rank %d loop %d: broadcast roots %s, expected %s" % (r, n + 1, roots, want))
print("check: in every loop on every rank the %d k-point MPI_Bcast have roots %s = mod(ik-1, %d)" % (nkpt, " ".join(map(str, want)), np_))
last = starts[-1]
ar = [i for i in range(last, len(s)) if s[i][0] == "MPI_Allreduce"]
end = ar[1] + 1 if len(ar) >= 2 else len(s)
def runs(cs):
    outl, prev, n = [], None, 0
    for c in cs:
        k = c[0][4:] + ("(%d)" % c[1] if c[1] is not None else "")
        if k == prev: n += 1
        else:
            if prev: outl.append(prev + ("x%d" % n if n > 1 else ""))
            prev, n = k, 1
    if prev: outl.append(prev + ("x%d" % n if n > 1 else ""))
    return " ".join(outl)
print("stages of rank 0's calls (%s):" % decoder)
print("  set-up: %d calls: %s" % (starts[0], runs(s[:starts[0]])))
bounds = starts + [end]
for n in range(len(starts)):
    part = s[bounds[n]:bounds[n + 1]]
    print("  loop %d: %d calls: %s" % (n + 1, len(part), runs(part)))
print("  final: %d calls: %s" % (len(s) - end, runs(s[end:])))
EOF

for name in $todo; do
    b=${name#elk-}                 # CASE-NP[-otf2][-rankfile]
    case_=${b%%-*}
    np=${b#*-}; np=${np%%-*}
    prep=$build/$case_
    [ -e "$prep/elk.in" ] || write_input "$case_" "$prep"
    dir=$out/$name
    set -- --input "$prep/elk.in" --fortran --preload "$build/libiotimes.so" \
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
    IOTIMES_WRITES=1 IOTIMES_MATCH=INFO.OUT \
        "$rec/record.sh" "$dir" "$np" "$@" -- $elk < /dev/null || fail "$name: record.sh failed"
    cd "$dir"
    grep -q 'Elk version .* stopped' INFO.OUT || fail "$name: no 'Elk version ... stopped' in INFO.OUT"
    [ -s stderr.txt ] || rm -f stderr.txt
    rm -f STATE.OUT EVECFV.OUT EVECSV.OUT RUNNING
    case $name in *-rankfile) cp "$build/rankfile-$name" rankfile ;; esac
    echo "package: elk-lapw $(dpkg-query -W -f='${Version}' elk-lapw 2>/dev/null) ($elk, Debian's binary; species $species)" >> versions.txt
    mkdir -p expected
    python3 "$build/truth.py" "$np" "$loops" . > expected/elk-info.txt || fail "$name: the truth failed"
    "$rec/rank0-iotimes.sh" .
    "$rec/log-times.py" . INFO.OUT 'start=Elk version [0-9.]+ started' 'scf=Self-consistent loop started' \
        'loop=Loop number : +[0-9]+' 'stopped=Self-consistent loop stopped' 'end=Elk version [0-9.]+ stopped' \
        || fail "$name: log-times.py failed"
    pack_run "$name" "$otf2"
done
# Pairs whose compare verdict is known from the runs: one input under two placements or tracers is
# similar; Si's 8 k-points and Al's 10 (another number of broadcasts per loop, other sizes) are not.
cat > "$out/elk-pairs.txt" <<'PAIRS'
# A B expected
elk-si-4 elk-si-4-rankfile similar
elk-si-4 elk-si-4-otf2 similar
elk-si-4 elk-al-4 different
elk-si-4-otf2 elk-al-4 different
PAIRS
echo "elk.sh: runs in $out; check them with: tools/record/check-heldout.py $out elk-..." >&2
