#!/bin/sh
# Records MPQC (the Massively Parallel Quantum Chemistry program of C. Janssen, E. Seidl et al.,
# Sandia; Debian's `mpqc` 2.3.1-22, linked against Open MPI 4.1.4: libmpi.so.40, libmpi_cxx)
# as held-out runs, kept OUTSIDE the repository and never used to tune anything
# (docs/corpus.md, "Held-out check"), with SST DUMPI preloaded. Nothing is downloaded.
# `apt-get install -y --no-install-recommends mpqc` (pulls the basis-set library
# /usr/share/mpqc). From the repository root:
#
#   tools/record/mpqc.sh [OUT_ROOT]        (default /work/heldout/runs-apps6)
#
# Runs (each < 2 s on 2 cores; DUMPI traces 0.4-2 MB, left unpacked as record.sh leaves them):
#   mpqc-4  4 ranks: water, closed-shell Hartree-Fock, STO-3G basis, single point (one SCF from
#           the core Hamiltonian guess). The input, h2o-sto3g.in, is written by this script in
#           MPQC's simple input format (the molecule of MPQC's own examples):
#               molecule: O 0.172 0 0 / H 0.745 0 0.754 / H 0.745 0 -0.754 (angstrom)
#               method: HF   basis: STO-3G   optimize: no   checkpoint: no
#           mpirun -np 4 mpqc h2o-sto3g.in
#   mpqc-8  8 ranks (oversubscribed): the example the package ships unchanged,
#           /usr/share/doc/mpqc/examples/hfh2oopt.in: water HF/6-31G* geometry optimization
#           (an STO-3G SCF as the guess wavefunction, projected into 6-31G*, then per
#           optimization step one 6-31G* SCF and one analytic gradient; converged after 3
#           gradients with this input):
#           mpirun -np 8 mpqc hfh2oopt.in
# The MP2 example (mp2h2o.in) was tried and is NOT recorded: MPQC's MP2 uses MTMPIMemoryGrp,
# whose service thread calls MPI_Recv concurrently with the main thread, and it crashes
# (SIGSEGV in MPI_Recv from sc::MTMPIThread::run_one) with Debian's Open MPI 4.1.4.
#
# What MPQC logs (stdout.txt; rank 0 prints, stderr is empty): "Using MPIMessageGrp for message
# passing (number of nodes = N)", threads (1), the memory group (MTMPIMemoryGrp; used only by
# the correlated methods), each SCF ("Beginning iterations.  Basis is B." then one
# "iter K energy = E delta = D" line per SCF iteration and "total scf energy = E"), for an
# optimization the gradients ("Total Gradient:", "Max Gradient : ... yes/no",
# "Optimization iteration K complete", "The optimization has converged."), and at the end a
# tree of timers (CPU and wall, min/max/avg over the nodes) whose names are MPQC's sections:
# NAO, calc (vector: density, evals, extrap, fock: accum, ao_gmat, init pmax, local data,
# setup, sum, symm; for gradients hcore/overlap/two-electron gradient timers), input (the guess
# SCF), in MPQC's order.
# In MPI terms (MPQC 2.3 manual, "Running MPQC in parallel" and the MessageGrp/SCF classes):
# every node reads the input (node 0 reads the files and broadcasts them: MPI_Bcast), the
# matrices are replicated (ReplSCMatrixKit), the two-electron integrals of each Fock build are
# divided among the nodes ("ao_gmat") and the partial Fock matrices are added up over all nodes
# ("sum": MessageGrp::sum, MPI_Allreduce), replicated linear algebra (evals, extrap = DIIS)
# uses further sums and broadcasts; there is no point-to-point halo and no domain
# decomposition. SCF iterations are therefore a sequence of collectives on MPI_COMM_WORLD
# duplicates (MPI_Comm_dup at start-up). The only point-to-point traffic in the traces is one
# burst of small MPI_Send/MPI_Recv (tag 0) just before MPI_Finalize, when the per-node timers
# are gathered for the min/max/avg tree, along a binomial tree (0-1, 0-2, 1-3 with 4 ranks;
# 0-1, 0-2, 0-4, 1-3, 1-5, 2-6, 3-7 with 8): a trace observation, listed in the README.
#
# The truth (README.md of each run, written by this script from the log only): number of
# nodes, every SCF in order with its basis, iteration count and final energy, the gradient and
# optimization steps, convergence, and the timer tree's section names in order; plus a decode
# check of rank 0's trace with dumpi2ascii (calls by function, no tracelogic).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record/record.sh
out=${1:-/work/heldout/runs-apps6}
command -v mpqc >/dev/null || { echo "mpqc.sh: mpqc missing (apt-get install -y --no-install-recommends mpqc)" >&2; exit 1; }
ex=/usr/share/doc/mpqc/examples/hfh2oopt.in
[ -f "$ex" ] || { echo "mpqc.sh: $ex missing (mpqc)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/mpqc-rec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/h2o-sto3g.in" <<'EOF'
% water, closed-shell Hartree-Fock, STO-3G, single point (tools/record/mpqc.sh)
molecule:
    O    0.172   0.000   0.000
    H    0.745   0.000   0.754
    H    0.745   0.000  -0.754
method: HF
basis: STO-3G
optimize: no
checkpoint: no
EOF
cp "$ex" "$tmp/hfh2oopt.in"

cat > "$tmp/truth.py" <<'EOF'
# Writes README.md of one MPQC run from its log (stdout.txt) and a decode of rank 0's trace.
import collections, os, re, subprocess, sys
d, np_, inp, what, d2a = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
log = open(os.path.join(d, "stdout.txt")).read()
nodes = int(re.search(r"Using MPIMessageGrp for message passing \(number of nodes = (\d+)\)", log).group(1))
threads = re.search(r"number of threads = (\d+)", log).group(1)
memgrp = re.search(r"Using (\w+) for distributed shared memory", log).group(1)
scfs = []
for m in re.finditer(r"Beginning iterations\.  Basis is (\S+)\.\n(.*?)total scf energy = +(\S+)", log, re.S):
    its = re.findall(r"^\s*iter\s+(\d+) energy = +(\S+) delta = (\S+)$", m.group(2), re.M)
    scfs.append((m.group(1), len(its), m.group(3), its[-1][2]))
grads = re.findall(r"^  Max Gradient\s*:\s*(\S+)\s+(\S+)\s+(yes|no)$", log, re.M)
optit = re.findall(r"Optimization iteration (\d+) complete", log)
conv = "The optimization has converged." in log
# Timer tree: the lines after the "CPU Wall" header until the blank line.
tm = re.search(r"^\s+CPU\s+Wall\s*\n\s+min.*\n((?:.+\n)+?)\n", log, re.M)
tree = [l for l in tm.group(1).splitlines() if l.strip()] if tm else []
def name(l):
    return l.split(":")[0]
b0 = sorted(f for f in os.listdir(d) if f.endswith("-0000.bin"))[0]
asc = subprocess.run([d2a, os.path.join(d, b0)], capture_output=True, text=True).stdout
calls = collections.Counter(l.split()[0] for l in asc.splitlines() if " entering at " in l)
thr = collections.Counter(re.findall(r" entering at .* in thread (\d+)\.", asc))
cmd = open(os.path.join(d, "command.txt")).read().strip()
ver = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", "mpqc", "libsc7v5", "libopenmpi3"], capture_output=True, text=True).stdout
w = []; p = w.append
p("# mpqc-%d: MPQC 2.3.1, %s, %d ranks\n" % (np_, what, np_))
p("Command (in this folder):\n\n    " + cmd + "\n")
p("Input: %s (in this folder).\n" % inp)
p("Packages:\n\n" + "".join("    " + l + "\n" for l in ver.splitlines()))
p("Recorded by tools/record/mpqc.sh (its header describes MPQC's parallel scheme). Files: command.txt, versions.txt, the input, stdout.txt (MPQC's log), stderr.txt (empty), the DUMPI trace (dumpi-*.meta, dumpi-*-NNNN.bin).\n")
p("## What the program does in MPI terms\n")
p("- MPIMessageGrp on %d nodes (log: \"number of nodes = %d\"), %s thread(s) per node, memory group %s (not used by HF). Replicated matrices; each Fock build divides the two-electron integrals among the nodes (timer \"ao_gmat\") and sums the partial Fock matrices over all nodes (timer \"sum\"); input and basis files are read by node 0 and broadcast. Collectives only (MPI_Bcast, MPI_Allreduce, MPI_Reduce), no domain decomposition, no neighbour exchange.\n" % (nodes, nodes, threads, memgrp))
p("- Sections in order (log):\n")
k = 0
for i, (basis, n, e, dl) in enumerate(scfs):
    role = "guess wavefunction SCF (input)" if (basis == "STO-3G" and len(scfs) > 1 and i == 0) else "SCF"
    p("  %d. %s, basis %s: %d iterations, total scf energy %s (last delta %s)" % (i + 1, role, basis, n, e, dl))
    if role == "SCF" and grads:
        if k < len(grads):
            g = grads[k]
            p("     then analytic gradient %d: max gradient %s (criterion %s: %s)%s" % (k + 1, g[0], g[1], g[2],
              "; optimization iteration %s complete (step taken)" % optit[k] if k < len(optit) else "; optimization converged" if conv else ""))
        k += 1
p("")
p("- Timer tree printed at the end (section names in MPQC's order, indentation = nesting):\n")
p("```\n" + "\n".join(l.rstrip() for l in tree) + "\n```\n")
p("## Expected truth\n")
p("- Ranks: %d." % nodes)
p("- SCF runs: %d; SCF iterations per SCF in order: %s (total %d)." % (len(scfs), ", ".join("%s %d" % (b, n) for b, n, _, _ in scfs), sum(n for _, n, _, _ in scfs)))
p("- Final SCF energy: %s hartree." % scfs[-1][2])
if grads:
    p("- Gradient evaluations: %d; optimization steps taken: %d; converged: %s." % (len(grads), len(optit), "yes" if conv else "no"))
else:
    p("- No gradient, no optimization (single point).")
p("- Communication: the SCF and gradient work is collectives only (MPI_Bcast, MPI_Allreduce, MPI_Reduce over all ranks; by MPQC's design one global sum of the partial Fock matrices per SCF iteration, timer \"sum\"); no domain decomposition, no halo exchange. The only point-to-point messages are the end-of-run timer gather (see the trace check below).\n")
p("## Trace check (dumpi2ascii of rank 0, no tracelogic)\n")
p("- %d MPI calls decoded on rank 0 (`grep -c entering`); by function: %s." % (sum(calls.values()), ", ".join("%s %d" % kv for kv in calls.most_common())))
p("- DUMPI thread ids on rank 0: %s." % ", ".join("thread %s: %d" % kv for kv in sorted(thr.items())))
dests = []
for b in sorted(f for f in os.listdir(d) if f.endswith(".bin")):
    a = subprocess.run([d2a, os.path.join(d, b)], capture_output=True, text=True).stdout
    c = collections.Counter(re.findall(r"MPI_Send entering .*\nint count=\d+\nMPI_Datatype .*\nint dest=(\d+)", a))
    dests.append("rank %s -> %s" % (b[-8:-4].lstrip("0") or "0", " ".join("%s x%d" % kv for kv in sorted(c.items(), key=lambda kv: int(kv[0]))) or "none"))
p("- Point-to-point (trace observation, not from the log): the MPI_Send/MPI_Recv pairs (tag 0, a few bytes each) come in one burst just before MPI_Finalize, i.e. while MPQC gathers its per-node timers for the min/max/avg tree above; they follow a binomial tree (rank r with r - 2^floor(log2 r) and r + 2^k, 2^k > r). MPI_Send per rank and destination: %s.\n" % "; ".join(dests))
open(os.path.join(d, "README.md"), "w").write("\n".join(w) + "\n")
print("mpqc-%d: nodes %d, SCF iterations %s, gradients %d, converged %s; rank 0: %d calls" % (np_, nodes, [n for _, n, _, _ in scfs], len(grads), conv, sum(calls.values())))
EOF

one() {
    np=$1; inp=$2; what=$3
    run=$out/mpqc-$np
    rm -rf "$run"
    "$rec" "$run" "$np" --input "$tmp/$inp" -- timeout 120 mpqc "$inp"
    python3 "$tmp/truth.py" "$run" "$np" "$inp" "$what" "$d2a"
    "$root/tools/record/expected-counts.sh" "$run"
}
one 4 h2o-sto3g.in "water HF/STO-3G single point"
one 8 hfh2oopt.in "water HF/6-31G* geometry optimization (shipped example hfh2oopt.in)"
