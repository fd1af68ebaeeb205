#!/bin/sh
# Records StarPU's MPI stencil example (StarPU, the task-based runtime of Inria Bordeaux; Debian's
# `starpu-examples` 1.3.10+dfsg-2, binary /usr/lib/x86_64-linux-gnu/starpu/mpi/stencil5, linked
# against libstarpumpi-1.3 and Open MPI 4.1.4) as held-out runs, kept OUTSIDE the repository and
# never used to tune anything (docs/corpus.md, "Held-out check"), with SST DUMPI preloaded.
# Nothing is downloaded. `apt-get install -y --no-install-recommends starpu-examples`.
# From the repository root:
#
#   tools/record/starpu.sh [OUT_ROOT]        (default /work/heldout/runs-apps6)
#
# Runs: OUT_ROOT/starpu-4 (4 ranks) and OUT_ROOT/starpu-8 (8 ranks, oversubscribed on 2 cores),
# the same unmodified binary and arguments:
#
#   mpirun -np NP /usr/lib/x86_64-linux-gnu/starpu/mpi/stencil5 -iter 100 -display
#
# with STARPU_NCPU=1 (one CPU worker a process), STARPU_NCUDA=0, STARPU_NOPENCL=0,
# STARPU_WORKERS_NOBIND=1 (no pinning: 8 processes share 2 cores), STARPU_COMM_STATS=1 (StarPU
# prints, at starpu_mpi_shutdown, the bytes of data each rank sent to each other rank: the
# truth for the communication graph) and STARPU_HOME set to a temporary folder whose bus
# performance model is calibrated first by an untraced 1-rank run (so that the traced processes
# do not calibrate concurrently).
#
# The program (mpi/examples/stencil/stencil5.c of StarPU 1.3.10; the source is not shipped, it
# was read in the starpu-runtime/starpu repository at tag starpu-1.3.10): a 5-point stencil,
# xy = (xy + 4 neighbours) / 5, on an X x Y grid of single floats, each cell a StarPU data
# handle. Debian's build is a STARPU_QUICK_CHECK build: X = Y = 4 (the -display output prints 4
# rows of 4 values; default iterations 5, here -iter 100). Cell (x, y) belongs to rank
# my_distrib(x, y, n) = (int)(x / sqrt(n) + (y / sqrt(n)) * sqrt(n)) % n, i.e. diagonal bands,
# so that every rank's cells touch only the cells of ranks r-1 and r+1 (mod n): with 4 ranks a
# ring 0-1-2-3-0; with 8 ranks the 16 cells belong to ranks 0-4 (1-5 after the migration), so
# the transfers form a chain 0-1-2-3-4-5 (busy between 1, 2 and 3) and ranks 6 and 7 only
# initialize and finalize. The program:
#   1. registers the cells (starpu_mpi_data_register, MPI tag y*X+x),
#   2. phase 1: 100 iterations, each inserting a task for the 4 interior cells (1..2 x 1..2)
#      with starpu_mpi_task_insert: the task runs on the owner of the written cell and StarPU
#      MPI sends it each neighbour cell owned elsewhere whose value changed since it was last
#      sent (the MPI cache is on by default); then waits for all tasks ("Waiting ..." on stderr),
#   3. migrates every cell to my_distrib2 = (my_distrib + 1) % n (starpu_mpi_data_migrate:
#      one transfer old owner -> new owner),
#   4. phase 2: 100 more iterations on the new distribution, "Waiting ..." again,
#   5. migrates every cell back to my_distrib, unregisters, starpu_mpi_shutdown.
# In MPI terms (StarPU 1.3's MPI layer, documented in its manual, "MPI Support"): one progress
# thread per process calls MPI_Init_thread (MPI_THREAD_SERIALIZED), does every transfer and
# MPI_Finalize; the application thread only calls MPI_Comm_rank/MPI_Comm_size. Each data transfer
# is an envelope (MPI_Isend of 32 MPI_BYTE, tag 42, received by an MPI_Irecv from
# MPI_ANY_SOURCE) followed by the data (MPI_Isend of one 4-byte contiguous derived datatype, tag
# 43, received by an MPI_Irecv from the sender), completed by MPI_Test polling / MPI_Wait.
#
# The truth (README.md of each run, written by this script, independent of tracelogic):
#   - StarPU's own communication statistics (stderr.txt, "[starpu_comm_stats][src:dst] B bytes"):
#     bytes of data sent per ordered pair of ranks (4 bytes = one cell transfer);
#   - a replay of stencil5.c's task and migration sequence with StarPU MPI's cache rules (send a
#     cell to a rank unless it was sent there since it was last written or migrated), giving the
#     number of data transfers per pair and per phase (phase 1, migration, phase 2, migration
#     back); the script checks that the replay's totals equal StarPU's statistics exactly and
#     says so in the README;
#   - the grid from -display (stdout.txt: per rank "mean=" then X rows of Y values, twice).
#
# Each run takes 2-5 s on 2 cores; DUMPI traces ~1.5 MB (4 ranks), ~3 MB (8 ranks), left
# unpacked as record.sh leaves them (tools/record/pack.sh packs a folder).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record/record.sh
out=${1:-/work/heldout/runs-apps6}
prog=/usr/lib/x86_64-linux-gnu/starpu/mpi/stencil5
[ -x "$prog" ] || { echo "starpu.sh: $prog missing (apt-get install -y --no-install-recommends starpu-examples)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
iter=100
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/starpu-rec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
STARPU_HOME=$tmp/home STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_NOPENCL=0 STARPU_WORKERS_NOBIND=1 STARPU_COMM_STATS=1
export STARPU_HOME STARPU_NCPU STARPU_NCUDA STARPU_NOPENCL STARPU_WORKERS_NOBIND STARPU_COMM_STATS
unset STARPU_SILENT STARPU_SSILENT STARPU_QUICK_CHECK || true
# Calibrate the bus model once, untraced (the traced runs then only read it).
(cd "$tmp" && mpirun --allow-run-as-root -np 1 "$prog" -iter 1 > calib.out 2>&1) || { cat "$tmp/calib.out" >&2; exit 1; }

cat > "$tmp/truth.py" <<'EOF'
# Writes README.md of one stencil5 run: replays stencil5.c (StarPU 1.3.10) and compares with
# StarPU's own [starpu_comm_stats] lines.
import collections, math, os, re, subprocess, sys
d, np_, niter, prog, d2a = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
err = open(os.path.join(d, "stderr.txt")).read()
outl = open(os.path.join(d, "stdout.txt")).read()
# Grid size from -display: rank 0's first block of rows after its "mean=" line.
rows = re.findall(r"^\[0\] ([0-9. ]+)$", outl, re.M)
Y = len(rows[0].split()); X = len(rows) // 2
def distrib(x, y, n):
    s = math.sqrt(n)
    return int(x / s + (y / s) * s) % n
own = {(x, y): distrib(x, y, np_) for x in range(X) for y in range(Y)}
own0 = dict(own)
sent = collections.defaultdict(set); phases = []
cur = None
def flush(c):
    for k in sent:
        sent[k] = {t for t in sent[k] if t[0] != c}
def xfer(c, src, dst):
    if (c, dst) not in sent[src]:
        sent[src].add((c, dst)); cur[(src, dst)] += 1
def run():
    for _ in range(niter):
        for x in range(1, X - 1):
            for y in range(1, Y - 1):
                e = own[(x, y)]
                for c in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                    if own[c] != e:
                        xfer(c, own[c], e)
                flush((x, y))
def migrate(f):
    for x in range(X):
        for y in range(Y):
            c = (x, y); new = f(x, y)
            if new != own[c]:
                xfer(c, own[c], new); own[c] = new; flush(c)
for name, step in (("phase 1: %d iterations on my_distrib" % niter, run),
                   ("migration to my_distrib2 = (my_distrib + 1) %% %d" % np_, lambda: migrate(lambda x, y: (distrib(x, y, np_) + 1) % np_)),
                   ("phase 2: %d iterations on my_distrib2" % niter, run),
                   ("migration back to my_distrib", lambda: migrate(lambda x, y: distrib(x, y, np_)))):
    cur = collections.Counter(); step(); phases.append((name, cur))
total = collections.Counter()
for _, c in phases:
    total.update(c)
stats = {(int(a), int(b)): int(float(v)) for a, b, v in re.findall(r"^\[starpu_comm_stats\]\[(\d+):(\d+)\]\t([0-9.]+) B", err, re.M)}
agree = stats == {k: 4 * v for k, v in total.items()}
# Trace sanity: decode rank 0, count calls.
b0 = sorted(f for f in os.listdir(d) if f.endswith("-0000.bin"))[0]
asc = subprocess.run([d2a, os.path.join(d, b0)], capture_output=True, text=True).stdout
calls = collections.Counter(l.split()[0] for l in asc.splitlines() if " entering at " in l)
threads = collections.Counter(re.findall(r" entering at .* in thread (\d+)\.", asc))
cmd = open(os.path.join(d, "command.txt")).read().strip()
ver = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", "starpu-examples", "libstarpumpi-1.3-3", "libstarpu-1.3-9", "libopenmpi3"], capture_output=True, text=True).stdout
w = []
p = w.append
p("# starpu-%d: StarPU 1.3.10 MPI example stencil5, %d ranks\n" % (np_, np_))
p("Command (in this folder; environment STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_NOPENCL=0 STARPU_WORKERS_NOBIND=1 STARPU_COMM_STATS=1, STARPU_HOME = a temporary folder with a pre-calibrated bus model):\n")
p("    " + cmd + "\n")
p("Packages:\n\n" + "".join("    " + l + "\n" for l in ver.splitlines()))
p("Recorded by tools/record/starpu.sh (its header describes the program and the MPI protocol). Files: command.txt, versions.txt, stdout.txt (the -display grids), stderr.txt (StarPU's log: thread level, \"Waiting ...\" twice per rank, [starpu_comm_stats]), the DUMPI trace (dumpi-*.meta, dumpi-*-NNNN.bin).\n")
p("## What the program does in MPI terms\n")
p("- Grid %d x %d cells (one float each; from -display: %d rows of %d values per rank; Debian's build is STARPU_QUICK_CHECK), %d interior cells updated per iteration.\n" % (X, Y, X, Y, (X - 2) * (Y - 2)))
p("- Owner of cell (x,y): my_distrib = (int)(x/sqrt(n) + (y/sqrt(n))*sqrt(n)) %% n with n = %d:\n" % np_)
p("```\n" + "\n".join("  x=%d: " % x + " ".join(str(own0[(x, y)]) for y in range(Y)) for x in range(X)) + "\n```\n")
p("- Sections in order: MPI_Init_thread (MPI_THREAD_SERIALIZED, by StarPU's MPI progress thread); data registration; phase 1 (%d iterations); \"Waiting ...\"; migration of every cell to (owner+1) %% n; phase 2 (%d iterations); \"Waiting ...\"; migration back; starpu_mpi_shutdown (MPI_Finalize by the progress thread).\n" % (niter, niter))
p("- Every transfer = envelope MPI_Isend (32 MPI_BYTE, tag 42; received with MPI_Irecv from MPI_ANY_SOURCE) + data MPI_Isend (1 element of a 4-byte contiguous derived type, tag 43; MPI_Irecv from the sender). Requests are completed by MPI_Test polling and MPI_Wait. All transfer calls are on the progress thread; the application thread only calls MPI_Comm_rank/MPI_Comm_size.\n")
p("## Expected truth\n")
pairs = sorted(k for k in total if total[k])
nb = sorted(set(tuple(sorted(k)) for k in pairs))
ring = all((b - a) % np_ in (1, np_ - 1) for a, b in nb)
idle = [r for r in range(np_) if not any(r in k for k in nb)]
p("- Ranks: %d. Communication graph: %s. Unordered pairs that communicate: %s.%s\n" % (np_,
  "every communicating pair is r, r+1 (mod %d): ring neighbours only (each rank exchanges data only with ranks r-1 and r+1)" % np_ if ring else "NOT only ring neighbours",
  ", ".join("%d-%d" % k for k in nb),
  (" Ranks with no cell and no transfer (idle apart from MPI_Init_thread/MPI_Barrier/MPI_Finalize): %s." % ", ".join(map(str, idle))) if idle else ""))
p("- Iterations: %d (phase 1) + %d (phase 2) = %d, each %d stencil tasks; 2 data migrations between them and at the end.\n" % (niter, niter, 2 * niter, (X - 2) * (Y - 2)))
p("- Data transfers per ordered pair src->dst (replay of stencil5.c with StarPU MPI's cache; 4 bytes each):\n")
p("| src->dst | " + " | ".join(n.split(":")[0] for n, _ in phases) + " | total | bytes (replay) | bytes (StarPU's stats) |")
p("|---|" + "---|" * (len(phases) + 3))
for k in pairs:
    p("| %d->%d | " % k + " | ".join(str(c[k]) for _, c in phases) + " | %d | %d | %s |" % (total[k], 4 * total[k], stats.get(k, "-")))
p("")
p("- Replay vs StarPU's own [starpu_comm_stats]: %s.\n" % ("identical for every pair" if agree else "DIFFERENT (see table); trust StarPU's stats"))
p("- Hence MPI messages per ordered pair: 2 x transfers (envelope + data); MPI_Isend per rank = 2 x transfers it sends, MPI_Irecv per rank = 2 x transfers it receives.\n")
for r in range(np_):
    s = sum(v for k, v in total.items() if k[0] == r); q = sum(v for k, v in total.items() if k[1] == r)
    p("  - rank %d: sends %d transfers (%d MPI_Isend expected), receives %d (%d MPI_Irecv expected)" % (r, s, 2 * s, q, 2 * q))
p("")
p("## Trace check (dumpi2ascii of rank 0, no tracelogic)\n")
p("- %d MPI calls decoded on rank 0 (`grep -c entering`); by function: %s.\n" % (sum(calls.values()), ", ".join("%s %d" % kv for kv in calls.most_common())))
p("- Calls per DUMPI thread id on rank 0: %s (two threads: StarPU's MPI progress thread and the application thread).\n" % ", ".join("thread %s: %d" % kv for kv in sorted(threads.items())))
open(os.path.join(d, "README.md"), "w").write("\n".join(w) + "\n")
print("starpu-%d: grid %dx%d, replay %s StarPU's stats, rank 0: %d calls (Isend %d, Irecv %d)" % (np_, X, Y, "==" if agree else "!=", sum(calls.values()), calls["MPI_Isend"], calls["MPI_Irecv"]))
if not agree:
    sys.exit(1)
EOF

for np in 4 8; do
    run=$out/starpu-$np
    rm -rf "$run"
    "$rec" "$run" "$np" -- timeout 120 "$prog" -iter "$iter" -display
    python3 "$tmp/truth.py" "$run" "$np" "$iter" "$prog" "$d2a"
    "$root/tools/record/expected-counts.sh" "$run"
done
