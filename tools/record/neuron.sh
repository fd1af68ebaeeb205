#!/bin/sh
# Records NEURON (the neuron simulator of Yale/Blue Brain, 8.2.2 as Debian ships it:
# `apt-get install -y neuron python3-neuron`) as held-out runs, kept OUTSIDE the repository and
# never used to tune anything (docs/corpus.md, "Held-out check"): Debian's /usr/bin/nrniv,
# unchanged, started as `nrniv -python -mpi ring.py NCELL DELAY TSTOP` on Open MPI, with SST DUMPI
# preloaded or with tools/otf2-tracer. Nothing is downloaded. From the repository root:
#
#   tools/record/neuron.sh [OUT_ROOT [RUN...]]     (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT neuron-...  (one table; OUT_ROOT/neuron-pairs.txt lists
#                                                    pairs with their expected compare verdict)
#
# The model is the ring network of NEURON's ParallelContext tutorial, written here as ring.py:
# NCELL = 16 ball-and-stick cells (soma with hh, a passive dendrite with an ExpSyn), gid g on rank
# g mod NP (round-robin, pc.set_gid2node / pc.cell), cell g-1 -> cell g by pc.gid_connect with
# delay DELAY = 1 ms, one NetStim kicking gid 0 at t = 1 ms (so one spike runs round the ring,
# about one cell every 2 ms), fixed dt 0.025 ms, pc.set_maxstep(10) (min delay = 1 ms), then
# h.finitialize and pc.psolve(TSTOP). NEURON's spike exchange (src/nrnmpi/mpispike.cpp,
# nrn_spikebuf_size 0) is collective only: per min-delay interval one MPI_Allgather of every
# rank's spike count and, when any rank spiked, one MPI_Allgatherv of the spikes; no
# point-to-point message at all. Rank 0 prints, on the trace's clock (CLOCK_MONOTONIC ns, as both
# tracers), lines "MARK setup-start|setup-end|psolve-start|psolve-end|end monotonic_ns=..." around
# the set-up (cells, connections, set_maxstep, finitialize), the run (psolve) and the output
# (pc.allreduce of the spike count, one pc.barrier per rank while each rank writes its spikes to
# spikes-R.txt), plus "NCELL .. intervals N" (TSTOP / min delay).
#
# Runs: neuron-ring-4 (4 ranks, TSTOP 100 ms, DUMPI), neuron-ring-4-otf2 (the same with the OTF2
# tracer), neuron-ring-8 (8 ranks), neuron-ring-4-rankfile (4 ranks placed in reverse order on
# the cores by an Open MPI rankfile, kept as RUN/rankfile), neuron-ring-4-t200 (TSTOP 200 ms:
# twice the intervals). A run's folder: command.txt, versions.txt, ring.py, stdout.txt (the MARK
# lines and the summary), stderr.txt, spikes-R.txt, the trace (dumpi-*.bin/.meta or trace/), and
# expected/: the decoders' counts (expected-counts.sh) and truth.txt (intervals, spikes, the MARK
# times in seconds since the trace's first event as the decoder shows it).
#
# Needs NEURON 8.2 with python3-neuron, Open MPI, SST DUMPI (DUMPI_PREFIX, default /opt/dumpi), the
# OTF2 tracer (OTF2_TRACER) and otf2-print. Each run takes a few seconds on 2 cores.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
nrniv=/usr/bin/nrniv
[ -x $nrniv ] || { echo "neuron.sh: NEURON is missing (apt-get install -y neuron python3-neuron)" >&2; exit 1; }
d2a=${DUMPI_PREFIX:-/opt/dumpi}/bin/dumpi2ascii
# nrniv embeds Debian's Python 3: a pyenv or venv python3 first on PATH hides /usr/lib/python3.
PATH=/usr/bin:/bin
export PATH
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d /tmp/neuron-build.XXXXXX)
trap 'rm -rf "$build"' EXIT

cat > "$build/ring.py" <<'EOF'
# neuron.sh (tracelogic tools/record): NEURON's ring network (ParallelContext tutorial).
# nrniv -python -mpi ring.py NCELL DELAY TSTOP
import sys, time
from neuron import h
h.load_file("stdrun.hoc")
NCELL, DELAY, TSTOP = int(sys.argv[-3]), float(sys.argv[-2]), float(sys.argv[-1])
pc = h.ParallelContext()
rank, nhost = int(pc.id()), int(pc.nhost())
def mark(what):
    if rank == 0:
        print("MARK %s monotonic_ns=%d wall=%.6f" % (what, time.clock_gettime_ns(time.CLOCK_MONOTONIC),
                                                      time.time()), flush=True)
mark("setup-start")
class Cell:
    def __init__(self, gid):
        self.gid = gid
        self.soma = h.Section(name="soma", cell=self)
        self.dend = h.Section(name="dend", cell=self)
        self.dend.connect(self.soma(1))
        self.soma.L = self.soma.diam = 12.6157
        self.dend.L = 200; self.dend.diam = 1; self.dend.nseg = 5
        for s in (self.soma, self.dend):
            s.Ra = 100; s.cm = 1
        self.soma.insert("hh")
        self.dend.insert("pas")
        for seg in self.dend:
            seg.pas.g = 0.001; seg.pas.e = -65
        self.syn = h.ExpSyn(self.dend(0.5)); self.syn.tau = 2
        self.spike_detector = h.NetCon(self.soma(0.5)._ref_v, None, sec=self.soma)
        self.spike_detector.threshold = 10
cells = {}
for gid in range(rank, NCELL, nhost):      # round-robin
    c = Cell(gid)
    cells[gid] = c
    pc.set_gid2node(gid, rank)
    pc.cell(gid, c.spike_detector)
ncs = []
for gid, c in cells.items():                # cell gid-1 -> cell gid
    nc = pc.gid_connect((gid - 1) % NCELL, c.syn)
    nc.weight[0] = 0.05; nc.delay = DELAY
    ncs.append(nc)
if pc.gid_exists(0):
    stim = h.NetStim(); stim.number = 1; stim.start = 1
    ncstim = h.NetCon(stim, cells[0].syn); ncstim.delay = 1; ncstim.weight[0] = 0.05
tvec = h.Vector(); idvec = h.Vector()
pc.spike_record(-1, tvec, idvec)
mindelay = pc.set_maxstep(10)
h.finitialize(-65)
mark("setup-end")
if rank == 0:
    print("NCELL %d nhost %d delay %g tstop %g mindelay %g intervals %g"
          % (NCELL, nhost, DELAY, TSTOP, mindelay, TSTOP / mindelay), flush=True)
mark("psolve-start")
t0 = pc.time()
pc.psolve(TSTOP)
t1 = pc.time()
mark("psolve-end")
nspk = int(pc.allreduce(len(tvec), 1))
if rank == 0:
    print("psolve wall %.6f s, total spikes %d" % (t1 - t0, nspk), flush=True)
for r in range(nhost):
    if r == rank:
        with open("spikes-%d.txt" % rank, "w") as f:
            for t, g in zip(tvec, idvec):
                f.write("%.3f %d\n" % (t, int(g)))
    pc.barrier()
mark("end")
pc.barrier()
pc.done()
h.quit()
EOF

# The truth, independently of tracelogic: stdout.txt's MARK lines dated against the decoder's
# first event (the earliest entry time of any rank), the intervals and the spikes.
cat > "$build/truth.py" <<'EOF'
import glob, os, re, subprocess, sys
d, d2a = sys.argv[1], sys.argv[2]
log = open(os.path.join(d, "stdout.txt")).read()
marks = [(m.group(1), int(m.group(2))) for m in re.finditer(r"^MARK (\S+) monotonic_ns=(\d+)", log, re.M)]
m = re.search(r"^NCELL.*$", log, re.M)
print("log: " + m.group(0))
print("log: " + re.search(r"^psolve wall.*$", log, re.M).group(0))
nspk = sum(len(open(f).read().split("\n")) - 1 for f in glob.glob(os.path.join(d, "spikes-*.txt")))
print("spikes in spikes-*.txt: %d" % nspk)
times = []
bins = sorted(glob.glob(os.path.join(d, "dumpi-*.bin")))
if bins:
    for b in bins:
        txt = subprocess.run([d2a, b], check=True, capture_output=True, text=True).stdout
        # "MPI_Init entering at walltime 1234.567, cputime ..."
        t = [float(x) for x in re.findall(r"entering at walltime ([0-9.]+)", txt)]
        times.append((min(t), max(re.findall(r"returning at walltime ([0-9.]+)", txt), key=float)))
    start = min(a for a, _ in times) * 1e9
    stop = max(float(b) for _, b in times) * 1e9
else:
    txt = subprocess.run(["otf2-print", os.path.join(d, "trace", "traces.otf2")], check=True,
                         capture_output=True, text=True).stdout
    clk = re.search(r"CLOCK_PROPERTIES.*?Ticks per Seconds: (\d+).*?Global offset: (\d+)", txt, re.S)
    ts = [int(x) for x in re.findall(r"^\S+\s+\d+\s+(\d+)\s", txt, re.M)]
    start, stop = min(ts), max(ts)
print("trace span on the decoder's clock: %.6f s" % ((stop - start) / 1e9))
for name, ns in marks:
    print("MARK %-13s %.6f s after the trace's first event" % (name, (ns - start) / 1e9))
if bins:
    # Rank 0's collectives by stage (pre = NEURON's start-up before setup-start): per-interval
    # exchanges are MPI_Barrier + MPI_Allgather (+ MPI_Allgatherv when a rank spiked).
    txt = subprocess.run([d2a, bins[0]], check=True, capture_output=True, text=True).stdout
    names = ["pre"] + [n for n, _ in marks]
    count = {}
    for f, t in re.findall(r"^(MPI_\w+) entering at walltime ([0-9.]+)", txt, re.M):
        if f == "MPI_Wtime":
            continue
        k = sum(1 for _, ns in marks if float(t) * 1e9 >= ns)
        count.setdefault(names[k], {}).setdefault(f, 0)
        count[names[k]][f] += 1
    for n in names:
        if n in count:
            print("rank 0 calls after %s: %s" % (n, " ".join("%s %d" % kv for kv in sorted(count[n].items()))))
EOF

runs="neuron-ring-4 neuron-ring-4-otf2 neuron-ring-8 neuron-ring-4-rankfile neuron-ring-4-t200"
for name in $runs; do
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    dir=$out/$name
    if [ -e "$dir" ]; then echo "neuron.sh: $name exists, skipped" >&2; continue; fi
    np=4; tstop=100
    case $name in neuron-ring-8*) np=8 ;; esac
    case $name in *-t200) tstop=200 ;; esac
    set -- --input "$build/ring.py"
    case $name in *-otf2) set -- "$@" --otf2 ;; esac
    case $name in *-rankfile)
        # rank i on core (NP - 1 - i) mod cores: the placement changes, not the numbering.
        "$rec/reverse-rankfile.sh" "$np" "$build/rankfile"
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile" --mpirun-opt --report-bindings ;;
    esac
    echo "==> $name" >&2
    if ! timeout 300 "$rec/record.sh" "$dir" "$np" "$@" -- $nrniv -python -mpi ring.py 16 1 "$tstop" < /dev/null; then
        mv "$dir" "$build/failed-$name" 2>/dev/null || true
        echo "neuron.sh: $name failed" >&2; exit 1
    fi
    case $name in *-rankfile) cp "$build/rankfile" "$dir/rankfile" ;; esac
    {
        echo "package: neuron $(dpkg-query -W -f='${Version}' neuron 2>/dev/null), python3-neuron $(dpkg-query -W -f='${Version}' python3-neuron 2>/dev/null)"
        echo "program: $nrniv -python -mpi ring.py 16 1 $tstop (ring.py written by tools/record/neuron.sh)"
    } >> "$dir/versions.txt"
    grep -q '^MARK end ' "$dir/stdout.txt" || { echo "neuron.sh: $name: no 'MARK end' in stdout.txt" >&2; exit 1; }
    "$rec/expected-counts.sh" "$dir"
    /usr/bin/python3 "$build/truth.py" "$dir" "$d2a" > "$dir/expected/truth.txt"
    echo "recorded $dir" >&2
done
# Pairs whose compare verdict is known from the program: one script and input under another
# tracer, another placement or twice the simulated time is similar.
cat > "$out/neuron-pairs.txt" <<'PAIRS'
# A B expected
neuron-ring-4 neuron-ring-4-otf2 similar
neuron-ring-4 neuron-ring-4-rankfile similar
neuron-ring-4 neuron-ring-4-t200 similar
PAIRS
echo "neuron.sh: runs in $out; check them with: tools/record/check-heldout.py $out neuron-..." >&2
