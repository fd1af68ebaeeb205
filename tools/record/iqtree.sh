#!/bin/sh
# Records IQ-TREE 2 (maximum-likelihood phylogenetic inference of B. Q. Minh, L.-T. Nguyen et
# al.; Debian's `iqtree` 2.0.7+dfsg-1, whose /usr/bin/iqtree2-mpi is linked against Open MPI
# 4.1.4: libmpi.so.40) as held-out runs, kept OUTSIDE the repository and never used to tune
# anything (docs/corpus.md, "Held-out check"), with SST DUMPI preloaded. Nothing is downloaded.
# `apt-get install -y --no-install-recommends iqtree`. From the repository root:
#
#   tools/record/iqtree.sh [OUT_ROOT]        (default /work/heldout/runs-apps7)
#
# Runs (each 5-15 s on 2 shared cores; DUMPI traces well under 1 MB, left unpacked):
#   iqtree-4  4 ranks, iqtree-8  8 ranks (oversubscribed): the alignment the package ships,
#           /usr/share/doc/iqtree/examples/example.phy (17 vertebrate taxa, 1998 DNA columns),
#           a fixed model (no ModelFinder) and a fixed seed:
#               mpirun -np N iqtree2-mpi -s example.phy -m GTR+G -seed 1
#           The search is NOT deterministic across runs (workers' trees arrive in timing
#           order), so the truth is taken from each run's own log.
#
# What IQ-TREE logs (stdout.txt = example.phy.log; stderr empty): "MPI: N processes", the
# model-parameter rounds, "INITIALIZING CANDIDATE TREE SET" (parsimony trees generated per
# process, "Master: K candidate trees gathered from workers", "K trees broadcasted to workers"),
# "Do NNI search on 5 best initial trees", "BETTER TREE FOUND at iteration I", every 10th
# iteration "Iteration I / LogL: L / Time: ... / Process: P" (P = the rank that did that NNI
# search), "OPTIMIZING CANDIDATE TREE SET", at the end "Sending STOP message to workers",
# "Total number of trees received: R", "Total number of trees sent: S", "Total number of NNI
# searches done by myself: M" (rank 0's own share), "TREE SEARCH COMPLETED AFTER T
# ITERATIONS", the final model optimization and "BEST SCORE FOUND : L".
# In MPI terms (IQ-TREE 2 source, utils/MPIHelper.h/.cpp and tree/iqtree.cpp: MASTER 0,
# TREE_TAG 1, STOP_TAG 2; in these traces every message carries tag 1): a master-worker star around rank 0. Every rank runs NNI searches on
# its own stochastic candidate trees; workers send the trees they find to the master
# (MPI_Send, tag 1, a serialized tree collection as MPI_CHAR) and receive the master's current
# best trees back; the master polls with MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) between its
# own NNI searches, then MPI_Probe/MPI_Get_count/MPI_Recv. The initial candidate set is
# gathered to rank 0 and broadcast (MPI_Bcast of a size then of the trees); an MPI_Barrier
# before MPI_Finalize. No worker-to-worker messages.
#
# The truth (README.md of each run, written by this script from the log only): number of
# processes, the candidate-set gather/broadcast counts, best initial and final log-likelihood,
# iterations, trees received by the master, NNI searches done by the master, the per-rank
# "Process: P" of every 10th iteration; plus a decode check of every rank's trace with
# dumpi2ascii (calls by function, peers, tags; no tracelogic).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record/record.sh
out=${1:-/work/heldout/runs-apps7}
command -v iqtree2-mpi >/dev/null || { echo "iqtree.sh: iqtree2-mpi missing (apt-get install -y --no-install-recommends iqtree)" >&2; exit 1; }
ex=/usr/share/doc/iqtree/examples/example.phy
[ -f "$ex" ] || { echo "iqtree.sh: $ex missing (iqtree)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/iqtree-rec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/truth.py" <<'EOF'
# Writes README.md of one IQ-TREE MPI run from its log (stdout.txt) and a decode of the traces.
import collections, os, re, subprocess, sys
d, np_, d2a = sys.argv[1], int(sys.argv[2]), sys.argv[3]
log = open(os.path.join(d, "stdout.txt")).read()
def one(rx, default="?"):
    m = re.search(rx, log, re.M)
    return m.group(1) if m else default
procs = int(one(r"^MPI:\s+(\d+) processes"))
gathered = re.findall(r"^Master: (\d+) candidate trees gathered from workers", log, re.M)
bcast = re.findall(r"^(\d+) trees broadcasted to workers", log, re.M)
better = re.findall(r"^BETTER TREE FOUND at iteration (\d+): (\S+)", log, re.M)
iters = re.findall(r"^Iteration (\d+) / LogL: (\S+) / .*/ Process: (\d+)", log, re.M)
cmd = open(os.path.join(d, "command.txt")).read().strip()
ver = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", "iqtree", "libopenmpi3", "openmpi-bin"], capture_output=True, text=True).stdout
bins = sorted(f for f in os.listdir(d) if f.endswith(".bin"))
ranks = []
for b in bins:
    asc = subprocess.run([d2a, os.path.join(d, b)], capture_output=True, text=True).stdout
    calls = collections.Counter(l.split()[0] for l in asc.splitlines() if " entering at " in l)
    peers = collections.Counter()
    cur = None
    for l in asc.splitlines():
        if " entering at " in l:
            cur = l.split()[0]
        m = re.match(r"int (dest|source|tag)=(-?\d+)", l)
        if m and cur in ("MPI_Send", "MPI_Recv", "MPI_Probe", "MPI_Iprobe"):
            peers["%s %s=%s" % (cur, m.group(1), m.group(2))] += 1
    ranks.append((b, calls, peers))
w = []; p = w.append
p("# iqtree-%d: IQ-TREE 2.0.7 (iqtree2-mpi), example.phy, GTR+G, %d ranks\n" % (np_, np_))
p("Command (in this folder):\n\n    " + cmd + "\n")
p("Input: example.phy (copied unchanged from /usr/share/doc/iqtree/examples/; 17 taxa, 1998 DNA columns).\n")
p("Packages:\n\n" + "".join("    " + l + "\n" for l in ver.splitlines()))
p("Recorded by tools/record/iqtree.sh (its header describes IQ-TREE's MPI scheme). Files: command.txt, versions.txt, example.phy, stdout.txt (IQ-TREE's screen log, identical to example.phy.log), stderr.txt, IQ-TREE's outputs (example.phy.iqtree/.treefile/.mldist/.bionj/.ckp.gz), the DUMPI trace (dumpi-*.meta, dumpi-*-NNNN.bin).\n")
p("## What the program does in MPI terms\n")
p("- Master-worker star: rank 0 is the master (MPIHelper MASTER 0); ranks 1..%d are workers. Every rank does NNI tree searches on its own candidate trees; workers send found trees to rank 0 (MPI_Send, tag 1 = TREE_TAG, serialized trees as MPI_CHAR) and get rank 0's best trees back; rank 0 polls with MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) between its own searches and receives with MPI_Probe + MPI_Get_count + MPI_Recv. No worker-to-worker messages." % (procs - 1))
p("- Phases (log order): model-parameter estimation (every rank, no communication), INITIALIZING CANDIDATE TREE SET (parsimony trees, gather to the master: \"Master: K candidate trees gathered from workers\", then MPI_Bcast to all: \"K trees broadcasted to workers\"), NNI searches with tree exchange (OPTIMIZING CANDIDATE TREE SET), \"Sending STOP message to workers\", final model optimization on rank 0's best tree, MPI_Barrier, MPI_Finalize.\n")
p("## Expected truth (from the log)\n")
p("- MPI processes: %d (log \"MPI: %d processes\"); master rank 0, %d workers." % (procs, procs, procs - 1))
p("- Candidate-set exchanges: %s (gathered at the master, in order: %s; broadcast to workers: %s)." % (len(gathered), ", ".join(gathered), ", ".join(bcast)))
p("- Initial best score: %s; BETTER TREE FOUND: %s." % (one(r"^Current best score: (\S+)"), "; ".join("iteration %s: %s" % b for b in better)))
p("- Tree search: %s iterations in total (\"TREE SEARCH COMPLETED AFTER %s ITERATIONS\"); every 10th iteration and the rank that did it: %s." % (one(r"^Total number of iterations: (\d+)"), one(r"TREE SEARCH COMPLETED AFTER (\d+) ITERATIONS"), ", ".join("%s:rank %s" % (i, pr) for i, _, pr in iters)))
p("- Master totals: trees received %s, trees sent %s (as IQ-TREE counts them), NNI searches done by the master itself %s; STOP sent to workers: %s." % (one(r"Total number of trees received: (\d+)"), one(r"Total number of trees sent: (\d+)"), one(r"Total number of NNI searches done by myself: (\d+)"), "yes" if "Sending STOP message to workers" in log else "no"))
p("- BEST SCORE FOUND: %s; total tree length %s; wall-clock %s s." % (one(r"^BEST SCORE FOUND : (\S+)"), one(r"^Total tree length: (\S+)"), one(r"^Total wall-clock time used: (\S+) sec")))
p("- Communication: point-to-point only between rank 0 and each worker (a star), plus collectives on MPI_COMM_WORLD (MPI_Bcast at the candidate-set broadcasts, one MPI_Barrier at the end).\n")
p("## Trace check (dumpi2ascii of every rank, no tracelogic)\n")
for b, calls, peers in ranks:
    p("- %s: %d MPI calls (`grep -c entering`); %s; peers/tags: %s." % (b, sum(calls.values()), ", ".join("%s %d" % kv for kv in sorted(calls.items())), ", ".join("%s x%d" % kv for kv in sorted(peers.items()))))
p("")
open(os.path.join(d, "README.md"), "w").write("\n".join(w) + "\n")
print("README.md written for %s: %d ranks, %d calls on rank 0" % (d, len(ranks), sum(ranks[0][1].values())))
EOF

for np in 4 8; do
    dir=$out/iqtree-$np
    "$rec" "$dir" "$np" --input "$ex" -- iqtree2-mpi -s example.phy -m GTR+G -seed 1
    dpkg-query -W -f='package: ${Package} ${Version}\n' iqtree >> "$dir/versions.txt"
    python3 "$tmp/truth.py" "$dir" "$np" "$d2a"
    "$root/tools/record/expected-counts.sh" "$dir"
done
