#!/usr/bin/env python3
"""Places hpcc's test sections on a DUMPI trace's time axis, independently of tracelogic.

    tools/record/hpcc-sections.py TRACE_DIR

TRACE_DIR holds an hpcc run recorded by tools/record/hpcc.sh (DUMPI) or tools/record/hpcc-otf2.sh
(OTF2): hpccoutf.txt (hpcc's output file, which marks "Begin of X section." and "End of X section."
for every test), iotimes.log (written by the iotimes shim: CLOCK_MONOTONIC time and file size at
every close of hpccoutf.txt by rank 0) and the trace: DUMPI files (*.bin), or an OTF2 archive
(trace/traces.otf2, or trace.tar.zst holding it) written by tools/otf2-tracer; both stamp calls with
the same CLOCK_MONOTONIC. A Begin/End line is dated by the first close after it was written. The
calls are read with the tracers' own decoders (dumpi2ascii; otf2-print, Debian's otf2-tools).
Writes into TRACE_DIR/expected:

- sections.tsv: section, begin and end in seconds since the trace's first event (the earliest
  "entering" time of any call over all ranks), and the raw CLOCK_MONOTONIC times;
- section-calls.tsv: per section (and the gaps between them), the MPI calls of all ranks entered in
  that interval, by function.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: hpcc-sections.py TRACE_DIR")
    d = sys.argv[1]
    d2a = os.environ.get("DUMPI2ASCII", "/opt/dumpi/bin/dumpi2ascii")
    closes = []
    with open(os.path.join(d, "iotimes.log")) as f:
        for line in f:
            t, _pid, off = line.split()
            closes.append((float(t), int(off)))
    closes.sort()
    marks = []
    offset = 0
    with open(os.path.join(d, "hpccoutf.txt"), "rb") as f:
        for raw in f:
            offset += len(raw)
            m = re.match(rb"(Begin|End) of (\S+) section\.", raw)
            if m:
                t = next(t for t, o in closes if o >= offset)
                marks.append((t, m.group(1).decode(), m.group(2).decode()))
    calls = []
    for path in sorted(glob.glob(os.path.join(d, "*.bin"))):
        out = subprocess.run([d2a, path], check=True, capture_output=True, text=True).stdout
        for m in re.finditer(r"^(MPI_\w+) entering at walltime ([\d.]+)", out, re.M):
            calls.append((float(m.group(2)), m.group(1)))
    decoder = "dumpi2ascii"
    if not calls:
        calls = otf2_calls(d)
        decoder = "otf2-print"
    t0 = min(t for t, _ in calls)
    sections = collections.OrderedDict()
    for t, kind, name in marks:
        sections.setdefault(name, {})[kind] = t
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    with open(os.path.join(d, "expected", "sections.tsv"), "w") as f:
        f.write("# hpcc test sections dated by tools/record/hpcc-sections.py (hpccoutf.txt + iotimes.log)\n")
        f.write("# times in seconds since the trace's first event; monotonic = raw CLOCK_MONOTONIC\n")
        f.write("section\tbegin_s\tend_s\tbegin_monotonic\tend_monotonic\n")
        for name, be in sections.items():
            b, e = be["Begin"], be["End"]
            f.write(f"{name}\t{b - t0:.6f}\t{e - t0:.6f}\t{b:.9f}\t{e:.9f}\n")
    # Intervals: before the first section, each section, the gap after it.
    bounds = []
    for name, be in sections.items():
        bounds.append((be["Begin"], name))
        bounds.append((be["End"], "after " + name))
    per = collections.OrderedDict([("before MPIRandomAccess", collections.Counter())])
    for _, label in bounds:
        per[label] = collections.Counter()
    for t, fn in calls:
        label = "before MPIRandomAccess"
        for bt, lab in bounds:
            if bt <= t:
                label = lab
            else:
                break
        per[label][fn] += 1
    with open(os.path.join(d, "expected", "section-calls.tsv"), "w") as f:
        f.write(f"# MPI calls of all ranks entered in each interval of expected/sections.tsv ({decoder})\n")
        f.write("# interval\tcalls\tby function (most first)\n")
        for label, c in per.items():
            fns = " ".join(f"{fn}={n}" for fn, n in sorted(c.items(), key=lambda x: (-x[1], x[0])))
            f.write(f"{label}\t{sum(c.values())}\t{fns}\n")


def otf2_calls(d):
    """(time in s, MPI function) of every ENTER of an MPI region in the OTF2 trace of `d`, from
    otf2-print (timestamps are CLOCK_MONOTONIC ns, tools/otf2-tracer)."""
    anchor = os.path.join(d, "trace", "traces.otf2")
    tmp = None
    if not os.path.exists(anchor):
        tmp = tempfile.TemporaryDirectory()
        packed = os.path.join(d, "trace.tar.zst")
        subprocess.run(f'zstd -dc "{packed}" | tar xf - -C "{tmp.name}"', shell=True, check=True)
        anchor = glob.glob(os.path.join(tmp.name, "**", "traces.otf2"), recursive=True)[0]
    out = subprocess.run(["otf2-print", anchor], check=True, capture_output=True, text=True).stdout
    calls = [
        (int(m.group(1)) / 1e9, m.group(2))
        for m in re.finditer(r'^ENTER\s+\d+\s+(\d+)\s+Region: "(MPI_\w+)"', out, re.M)
    ]
    if tmp:
        tmp.cleanup()
    return calls


if __name__ == "__main__":
    main()
