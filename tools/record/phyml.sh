#!/bin/sh
# Records PhyML (maximum-likelihood phylogenies of S. Guindon, O. Gascuel et al.; Debian's
# `phyml` 3:3.3.20220408-3, whose /usr/bin/phyml-mpi is linked against Open MPI 4.1.4:
# libmpi.so.40) as held-out runs, kept OUTSIDE the repository and never used to tune anything
# (docs/corpus.md, "Held-out check"), with SST DUMPI preloaded. Nothing is downloaded.
# `apt-get install -y --no-install-recommends phyml`. From the repository root:
#
#   tools/record/phyml.sh [OUT_ROOT]        (default /work/heldout/runs-apps7)
#
# Runs (each 5-30 s on 2 shared cores; DUMPI traces well under 1 MB, left unpacked): the DNA
# alignment the package ships, /usr/share/doc/phyml/examples/nucleic (54 taxa, 886 sites),
# HKY85 + 4-class discrete gamma, BioNJ tree with branch lengths and model parameters optimized
# but no topology search (-o lr; the default SPR search takes > 60 s per replicate set here),
# non-parametric bootstrap, fixed seed:
#   phyml-4  4 ranks: mpirun -np 4 phyml-mpi -i nucleic -b 12 -m HKY85 -o lr --r_seed 1 --no_memory_check
#            (12 replicates = 3 rounds of 4)
#   phyml-8  8 ranks (oversubscribed): the same with -b 20, which is not a multiple of 8, so
#            PhyML raises it to 24 replicates = 3 rounds of 8 (src/mpi_boot.c; this build does not
#            print the "not a multiple" notice, the progress bar shows "20/  24", "24/  24" and
#            nucleic_phyml_boot_trees.txt holds 24 trees)
#
# What PhyML logs (stdout.txt; rank 0 prints, stderr holds Open MPI noise if any): "Running the
# analysis on N CPUs", the option table (model, "Nb of bootstrapped data sets", "Optimise tree
# topology: no", "Random seed"), patterns found, the optimization rounds of the original data
# set ("(t sec) [lnL] [Branch lengths / Ts/ts ratio / Alpha]"), "Log likelihood of the current
# tree", "Launch bootstrap analysis on the most likely tree...", "The bootstrap analysis will
# use N CPUs", a progress bar with one dot per replicate received ("[....] k/ B"), "Exiting
# bootstrap function normally", "Completed the bootstrap analysis successfully". Output files
# nucleic_phyml_tree.txt (tree with support values), nucleic_phyml_stats.txt,
# nucleic_phyml_boot_trees.txt and nucleic_phyml_boot_stats.txt (one line per replicate).
# In MPI terms (PhyML source, src/mpi_boot.c Bootstrap_MPI, src/mpi_boot.h BootTreeTag 0,
# BootStatTag 1): every rank analyses the original alignment itself (no communication), then
# the bootstrap runs in rounds of N replicates (B/N rounds, B rounded up to a multiple of N).
# Per round rank 0 draws N resampled site-weight vectors and sends one to each worker 1..N-1
# with MPI_Ssend (MPI_INT, tag 0), keeping the last for itself; every rank optimizes one
# replicate; each worker returns its replicate tree and its statistics line to rank 0 with two
# MPI_Ssend of a fixed T_MAX_LINE-character buffer (tags 0 then 1), which rank 0 receives in
# rank order 1..N-1 (MPI_Recv, MPI_ANY_TAG, two per worker); the round ends with MPI_Reduce
# (MPI_SUM to root 0, MPI_INT, 2n-3 = 105 branch bipartition counts for n = 54 taxa) on
# MPI_COMM_WORLD. A master-worker star; no worker-to-worker messages.
#
# The truth (README.md of each run, written by this script from the log and output files only):
# CPUs, replicates requested and run, rounds, replicates per rank, lnL of the ML tree, the
# bootstrap progress count, the number of replicate lines in the boot files; plus a decode check
# of every rank's trace with dumpi2ascii (calls by function, peers, tags; no tracelogic).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record/record.sh
out=${1:-/work/heldout/runs-apps7}
command -v phyml-mpi >/dev/null || { echo "phyml.sh: phyml-mpi missing (apt-get install -y --no-install-recommends phyml)" >&2; exit 1; }
ex=/usr/share/doc/phyml/examples/nucleic
[ -f "$ex" ] || { echo "phyml.sh: $ex missing (phyml)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/phyml-rec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/truth.py" <<'EOF'
# Writes README.md of one PhyML MPI bootstrap run from its log (stdout.txt) and outputs, and a
# decode of the traces.
import collections, os, re, subprocess, sys
d, np_, breq, d2a = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
log = open(os.path.join(d, "stdout.txt")).read()
def one(rx, default="?"):
    m = re.search(rx, log, re.M)
    return m.group(1) if m else default
cpus = int(one(r"Running the analysis on (\d+) CPUs"))
bcpus = one(r"The bootstrap analysis will use (\d+) CPUs")
prog = re.findall(r"\]\s+(\d+)/\s*(\d+)", log)
brun = int(prog[-1][1]) if prog else breq
rounds = brun // cpus
bt = [l for l in open(os.path.join(d, "nucleic_phyml_boot_trees.txt")) if l.strip()]
ntaxa = int(open(os.path.join(d, "nucleic")).readline().split()[0])
cmd = open(os.path.join(d, "command.txt")).read().strip()
ver = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", "phyml", "libopenmpi3", "openmpi-bin"], capture_output=True, text=True).stdout
ranks = []
for b in sorted(f for f in os.listdir(d) if f.endswith(".bin")):
    asc = subprocess.run([d2a, os.path.join(d, b)], capture_output=True, text=True).stdout
    calls = collections.Counter(l.split()[0] for l in asc.splitlines() if " entering at " in l)
    peers = collections.Counter()
    cur = None
    for l in asc.splitlines():
        if " entering at " in l:
            cur = l.split()[0]
        m = re.match(r"int (dest|source|tag|root)=(-?\d+)", l)
        if m and cur not in (None, "MPI_Init"):
            peers["%s %s=%s" % (cur, m.group(1), m.group(2))] += 1
    ranks.append((b, calls, peers))
w = []; p = w.append
p("# phyml-%d: PhyML 3.3.20220408 (phyml-mpi), nucleic, HKY85+G4, %d bootstrap replicates, %d ranks\n" % (np_, brun, np_))
p("Command (in this folder):\n\n    " + cmd + "\n")
p("Input: nucleic (copied unchanged from /usr/share/doc/phyml/examples/; %d taxa, %s sites, interleaved PHYLIP DNA).\n" % (ntaxa, open(os.path.join(d, "nucleic")).readline().split()[1]))
p("Packages:\n\n" + "".join("    " + l + "\n" for l in ver.splitlines()))
p("Recorded by tools/record/phyml.sh (its header describes PhyML's MPI bootstrap). Files: command.txt, versions.txt, nucleic, stdout.txt (PhyML's log), stderr.txt, PhyML's outputs (nucleic_phyml_tree.txt, nucleic_phyml_stats.txt, nucleic_phyml_boot_trees.txt, nucleic_phyml_boot_stats.txt), the DUMPI trace (dumpi-*.meta, dumpi-*-NNNN.bin).\n")
p("## What the program does in MPI terms\n")
p("- Phase 1, no communication: every rank reads the alignment, builds the BioNJ tree and optimizes branch lengths, ts/tv ratio and gamma shape on the original data (no topology search, -o lr).")
p("- Phase 2, bootstrap (src/mpi_boot.c, Bootstrap_MPI), a master-worker star around rank 0, in %d rounds of %d replicates (one per rank per round). Per round: rank 0 resamples %d site-weight vectors and MPI_Ssend's one to each worker 1..%d (MPI_INT, tag 0); every rank optimizes its replicate; each worker MPI_Ssend's its replicate tree string (tag 0 = BootTreeTag) and statistics line (tag 1 = BootStatTag) to rank 0, fixed-size MPI_CHAR buffers; rank 0 receives them in rank order 1..%d (MPI_Recv, MPI_ANY_TAG, 2 per worker); then MPI_Reduce(MPI_SUM, root 0) of the %d bipartition counts over all ranks." % (rounds, cpus, cpus - 1, cpus - 1, cpus - 1, 2 * ntaxa - 3))
p("- No worker-to-worker messages.\n")
p("## Expected truth (from the log and output files)\n")
p("- CPUs: %d (\"Running the analysis on %d CPUs\"; \"The bootstrap analysis will use %s CPUs\"); master rank 0, %d workers." % (cpus, cpus, bcpus, cpus - 1))
p("- Bootstrap replicates: requested %d, run %d%s; rounds %d; replicates per rank %d (each rank one per round)." % (breq, brun, " (raised by PhyML to a multiple of %d CPUs; total shown in the progress bar: %d)" % (cpus, brun) if brun != breq else "", rounds, rounds))
p("- Progress bar: %s; replicate trees in nucleic_phyml_boot_trees.txt: %d." % (", ".join("%s/%s" % x for x in prog), len(bt)))
p("- Log likelihood of the ML tree (original data): %s; completed normally: %s." % (one(r"Log likelihood of the current tree: (\S+?)\.?$"), "yes" if "Completed the bootstrap analysis successfully" in log else "no"))
p("- Expected message counts: per round %d seed messages rank 0 -> workers (one to each), %d result messages workers -> rank 0 (two from each), 1 MPI_Reduce; over the run %d, %d and %d." % (cpus - 1, 2 * (cpus - 1), rounds * (cpus - 1), rounds * 2 * (cpus - 1), rounds))
p("- Communication: a star around rank 0, synchronous sends (MPI_Ssend), rank-ordered receives; collectives MPI_Reduce (one per round) and MPI_Bcast (one, at start-up) on MPI_COMM_WORLD.\n")
p("## Trace check (dumpi2ascii of every rank, no tracelogic)\n")
for b, calls, peers in ranks:
    p("- %s: %d MPI calls (`grep -c entering`); %s; peers/tags/roots: %s." % (b, sum(calls.values()), ", ".join("%s %d" % kv for kv in sorted(calls.items())), ", ".join("%s x%d" % kv for kv in sorted(peers.items()))))
p("")
open(os.path.join(d, "README.md"), "w").write("\n".join(w) + "\n")
print("README.md written for %s: %d ranks, %d replicates, %d calls on rank 0" % (d, len(ranks), brun, sum(ranks[0][1].values())))
EOF

for spec in 4:12 8:20; do
    np=${spec%%:*}; b=${spec#*:}
    dir=$out/phyml-$np
    "$rec" "$dir" "$np" --input "$ex" -- phyml-mpi -i nucleic -b "$b" -m HKY85 -o lr --r_seed 1 --no_memory_check
    dpkg-query -W -f='package: ${Package} ${Version}\n' phyml >> "$dir/versions.txt"
    python3 "$tmp/truth.py" "$dir" "$np" "$b" "$d2a"
    "$root/tools/record/expected-counts.sh" "$dir"
done
