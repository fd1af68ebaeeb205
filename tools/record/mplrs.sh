#!/bin/sh
# Records mplrs (the MPI-parallel vertex/facet enumeration of lrslib 7.1, D. Avis and C. Jordan,
# Debian's `mplrs` 0.71b: `apt-get install -y mplrs lrslib`) as held-out runs, kept OUTSIDE the
# repository and never used to tune anything (docs/corpus.md, "Held-out check"): Debian's
# /usr/bin/mplrs, unchanged, on Open MPI with SST DUMPI preloaded or with tools/otf2-tracer.
# Nothing is downloaded. From the repository root:
#
#   tools/record/mplrs.sh [OUT_ROOT [RUN...]]      (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT mplrs-...  (OUT_ROOT/mplrs-pairs.txt lists pairs with
#                                                    their expected compare verdict)
#
# The case (written here as c32-8.ext): the cyclic polytope C(32, 8), the convex hull of the 32
# points (t, t^2, ..., t^8), t = 1 .. 32, on the moment curve, given as a V-representation;
# mplrs enumerates its facets (the H-representation). C(n, 2m) is simplicial and has
# n/(n-m) * binomial(n-m, m) facets (McMullen's upper bound theorem is tight for it): 23400 here.
# Serial `lrs c32-8.ext` takes 1.1 s (bases=17550); `mpirun -np 4 mplrs c32-8.ext c32-8.out`
# takes 2 to 3 s on 2 cores, with the default job splitting (-id 2 -maxc 50 -lmin 3).
#
# What mplrs does in MPI (as the trace shows it; mplrs.c of lrslib): rank 0 is the master, rank 1
# the consumer (collects and writes the output), ranks 2 .. N-1 the workers. Start-up: the master
# MPI_Sends the input file (tag 20, an int header then the text as MPI_CHAR) to every other rank
# and runs the first, shallow enumeration (-id) itself to fill the job queue L. The master never
# blocks: it keeps an MPI_Irecv per worker posted for the worker's "I am idle" signal (tag 6,
# MPI_UNSIGNED) and for the unfinished subtrees a worker returns (tag 10 int header, then a pair
# int + MPI_CHAR on a fresh tag >= 100 per message), polls them with MPI_Test/MPI_Testall, and
# hands a job to an idle worker with two MPI_Isends (tag 1: int header, MPI_CHAR job string).
# A worker MPI_Recv's its job from rank 0 with MPI_ANY_TAG (the only wildcard: no receive in
# mplrs uses MPI_ANY_SOURCE, every receive names its peer), runs lrs on the subtree (budget -maxc
# bases), MPI_Isends its output to the consumer (tag 7 int header, then MPI_CHAR on a fresh tag)
# and its unfinished subtrees to the master, then signals idle again. When L is empty and every
# worker is idle the master sends each worker the stop message (tag 8), the workers send their
# counts to the consumer (tag 1), the master sends the totals to the consumer (tag 1) and the
# consumer prints the totals. So the process graph is two stars: rank 0 - every other rank, rank
# 1 - every worker (the workers never talk to each other).
#
# The truth, independently of tracelogic (expected/truth.txt): mplrs's own statistics on stdout
# ("Total number of jobs: J, L became empty E times, tree depth D", "Finished with ... W
# workers", "Totals: facets=F bases=B") and the output file's facet count against the closed
# form; from the decoder (dumpi2ascii; DUMPI runs only): the jobs the master handed to each
# worker (tag-1 MPI_CHAR Isends; their sum is J), the subtree returns to the master (tag 10), the
# idle signals (tag 6), the output messages to the consumer (tag 7), the MPI_ANY_TAG and
# MPI_ANY_SOURCE receives, and the process graph (pairs of ranks with a message, both ways).
# J, the tree splitting and the per-worker shares change from run to run (dynamic load
# balancing); F and B never change.
#
# Runs: mplrs-4 (4 ranks: master, consumer, 2 workers; DUMPI), mplrs-4-otf2 (the same with the
# OTF2 tracer), mplrs-4-rankfile (4 ranks placed in reverse order on the cores by an Open MPI
# rankfile, kept as RUN/rankfile), mplrs-8 (8 ranks: 6 workers). A run's folder: command.txt,
# versions.txt, c32-8.ext, stdout.txt (mplrs's statistics), stderr.txt, c32-8.out.zst (the
# facets), the trace (dumpi.tar.zst, or trace.tar.zst for OTF2: trace/ packed) and expected/: the decoders' counts
# (expected-counts.sh) and truth.txt.
#
# Needs mplrs, Open MPI, SST DUMPI (DUMPI_PREFIX, default /opt/dumpi), the OTF2 tracer
# (OTF2_TRACER), otf2-print, python3 and zstd. Each run takes 2 to 4 s on 2 cores.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
mplrs=/usr/bin/mplrs
[ -x $mplrs ] || { echo "mplrs.sh: mplrs is missing (apt-get install -y mplrs lrslib)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d /tmp/mplrs-build.XXXXXX)
trap 'rm -rf "$build"' EXIT

# c32-8.ext: the cyclic polytope C(32, 8) as a V-representation (lrs format: a leading 1 marks
# a vertex).
python3 - > "$build/c32-8.ext" <<'EOF'
n, d = 32, 8
print("cyclic-%d-%d" % (n, d))
print("V-representation")
print("begin")
print("%d %d integer" % (n, d + 1))
for t in range(1, n + 1):
    print("1 " + " ".join(str(t ** k) for k in range(1, d + 1)))
print("end")
EOF

cat > "$build/truth.py" <<'EOF'
import collections, glob, math, os, re, subprocess, sys
d, d2a = sys.argv[1], sys.argv[2]
n, m = 32, 4
so = open(os.path.join(d, "stdout.txt")).read()
print("mplrs statistics (stdout.txt):")
for pat in (r"^\*Starting depth.*$", r"^\*Total number of jobs.*$", r"^\*Finished with.*$",
            r"^\*Totals:.*$", r"^\*Elapsed time.*$"):
    mm = re.search(pat, so, re.M)
    print("  " + (mm.group(0) if mm else "MISSING " + pat))
jobs = int(re.search(r"Total number of jobs: (\d+)", so).group(1))
out = subprocess.run(["zstd", "-dc", os.path.join(d, "c32-8.out.zst")], check=True,
                     capture_output=True, text=True).stdout
body = out.split("\nbegin\n", 1)[1].split("\nend", 1)[0].strip().split("\n")
rows = [l for l in body if l and not l.startswith("*")]  # the size line is "***** 9 rational"
print("facets in c32-8.out: %d rows between begin and end (closed form n/(n-m) C(n-m,m) = %d)"
      % (len(rows), n * math.comb(n - m, m) // (n - m)))
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if not bins:
    print("jobs: %d (no DUMPI files: per-message truth only for DUMPI runs)" % jobs)
    sys.exit(0)
np_ = len(bins)
print("ranks: %d (0 master, 1 consumer, 2..%d workers)" % (np_, np_ - 1))
msgs = collections.Counter()   # (src, dst, kind) -> count
anytag = anysrc = 0
edges = set()
for r, b in enumerate(bins):
    txt = subprocess.run([d2a, b], check=True, capture_output=True, text=True).stdout
    for blk in re.split(r"\n(?=MPI_\w+ entering)", txt):
        f = re.match(r"(MPI_\w+) entering", blk)
        if not f:
            continue
        f = f.group(1)
        g = lambda k: int(re.search(r"\bint " + k + r"=(-?\d+)", blk).group(1))
        if f in ("MPI_Send", "MPI_Isend"):
            dst, tag = g("dest"), g("tag")
            dt = re.search(r"datatype=\d+ \((\w+)\)", blk).group(1)
            kind = "tag>=100 " + dt if tag >= 100 else "tag %d %s" % (tag, dt)
            msgs[(r, dst, kind)] += 1
            edges.add((min(r, dst), max(r, dst)))
        elif f in ("MPI_Recv", "MPI_Irecv"):
            if g("source") == -1:
                anysrc += 1
            if g("tag") == -1:
                anytag += 1
print("receives with MPI_ANY_SOURCE: %d; with MPI_ANY_TAG: %d" % (anysrc, anytag))
per = {w: msgs[(0, w, "tag 1 MPI_CHAR")] for w in range(2, np_)}
print("jobs handed out by the master (tag-1 MPI_CHAR Isends per worker): %s, sum %d (mplrs says %d)"
      % (" ".join("%d:%d" % kv for kv in per.items()), sum(per.values()), jobs))
def row(title, kind, src_is_worker, peer):
    c = {w: (msgs[(w, peer, kind)] if src_is_worker else msgs[(peer, w, kind)]) for w in range(2, np_)}
    print("%s: %s, sum %d" % (title, " ".join("%d:%d" % kv for kv in c.items()), sum(c.values())))
row("idle signals worker -> master (tag 6)", "tag 6 MPI_UNSIGNED", True, 0)
row("subtree returns worker -> master (tag 10 headers)", "tag 10 MPI_INT", True, 0)
row("output headers worker -> consumer (tag 7)", "tag 7 MPI_INT", True, 1)
print("point-to-point messages (Send/Isend) per pair src->dst:")
pairs = collections.Counter()
for (s, t, k), c in msgs.items():
    pairs[(s, t)] += c
for (s, t), c in sorted(pairs.items()):
    print("  %d->%d %d" % (s, t, c))
print("process graph (undirected, a message either way): %d edges: %s"
      % (len(edges), " ".join("%d-%d" % e for e in sorted(edges))))
print("expected topology: rank 0 linked to all %d others, rank 1 to all %d workers, no worker-worker edge"
      % (np_ - 1, np_ - 2))
EOF

runs="mplrs-4 mplrs-4-otf2 mplrs-4-rankfile mplrs-8"
for name in $runs; do
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    dir=$out/$name
    if [ -e "$dir" ]; then echo "mplrs.sh: $name exists, skipped" >&2; continue; fi
    np=4
    case $name in mplrs-8*) np=8 ;; esac
    set -- --input "$build/c32-8.ext"
    case $name in *-otf2) set -- "$@" --otf2 ;; esac
    case $name in *-rankfile)
        # rank i on core (NP - 1 - i) mod cores: the placement changes, not the numbering. Bound
        # two to a core, Open MPI's busy polling would starve the peer (examl.sh): yield when idle.
        "$rec/reverse-rankfile.sh" "$np" "$build/rankfile"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile" --mpirun-opt --report-bindings \
            --mpirun-opt "--mca mpi_yield_when_idle 1" ;;
    esac
    echo "==> $name" >&2
    if ! timeout 300 "$rec/record.sh" "$dir" "$np" "$@" -- $mplrs c32-8.ext c32-8.out < /dev/null; then
        mv "$dir" "$build/failed-$name" 2>/dev/null || true
        echo "mplrs.sh: $name failed" >&2; exit 1
    fi
    case $name in *-rankfile) cp "$build/rankfile" "$dir/rankfile" ;; esac
    {
        echo "package: mplrs $(dpkg-query -W -f='${Version}' mplrs 2>/dev/null), lrslib $(dpkg-query -W -f='${Version}' lrslib 2>/dev/null)"
        echo "program: $mplrs c32-8.ext c32-8.out (c32-8.ext written by tools/record/mplrs.sh)"
    } >> "$dir/versions.txt"
    grep -q 'Total number of jobs' "$dir/stdout.txt" || { echo "mplrs.sh: $name: no job statistics in stdout.txt" >&2; exit 1; }
    grep -q '^end' "$dir/c32-8.out" || { echo "mplrs.sh: $name: c32-8.out incomplete" >&2; exit 1; }
    zstd -q -19 --rm "$dir/c32-8.out"
    "$rec/expected-counts.sh" "$dir"
    python3 "$build/truth.py" "$dir" "$d2a" > "$dir/expected/truth.txt"
    # Packed as examl.sh does: the master and the consumer poll with MPI_Test, 50 000 to
    # 900 000 events a run, so an OTF2 trace/ can exceed 30 MB unpacked.
    "$rec/pack.sh" "$dir"
    echo "recorded $dir ($(du -sh "$dir" | cut -f1))" >&2
done
# Pairs whose compare verdict is known from the program: the same case under another tracer or
# another placement is similar (the job count and the splitting vary a little, the protocol
# not at all). 4 against 8 ranks: the same protocol with three times the workers; no verdict is
# claimed, the pair is listed for the record.
cat > "$out/mplrs-pairs.txt" <<'PAIRS'
# A B expected
mplrs-4 mplrs-4-otf2 similar
mplrs-4 mplrs-4-rankfile similar
PAIRS
echo "mplrs.sh: runs in $out; check them with: tools/record/check-heldout.py $out mplrs-..." >&2
