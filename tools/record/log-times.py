#!/usr/bin/env python3
"""Dates chosen lines of a program's log on a trace's time axis, independently of tracelogic.

    tools/record/log-times.py TRACE_DIR LOG NAME=REGEX [NAME=REGEX ...]

TRACE_DIR holds a run recorded with the iotimes shim (tools/record/iotimes.c, IOTIMES_WRITES=1):
iotimes.log has the CLOCK_MONOTONIC time (DUMPI's clock) and the bytes written so far at every
write of the log by the program. A log line matching REGEX (Python, searched in the line) is dated
by the first write whose offset reaches past the line's end: the line was written by then, and
after the previous write. Writes TRACE_DIR/expected/log-times.tsv (name, log line number, the
matched text, time in seconds since the trace's first event = the earliest "entering" time over
all ranks in dumpi2ascii, raw CLOCK_MONOTONIC) and expected/log-calls.tsv (the MPI calls of all
ranks entered between consecutive dated lines, by function, from dumpi2ascii). A run without DUMPI
files is read as OTF2 (trace/traces.otf2 or trace.tar.zst, tools/otf2-tracer: the same
CLOCK_MONOTONIC) through otf2-print, as hpcc-sections.py does.
"""
import collections
import glob
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: log-times.py TRACE_DIR LOG NAME=REGEX [NAME=REGEX ...]")
    d, log = sys.argv[1], sys.argv[2]
    rules = [(a.split("=", 1)[0], re.compile(a.split("=", 1)[1].encode())) for a in sys.argv[3:]]
    d2a = os.environ.get("DUMPI2ASCII", "/opt/dumpi/bin/dumpi2ascii")
    writes = []
    with open(os.path.join(d, "iotimes.log")) as f:
        for line in f:
            t, _pid, off = line.split()
            writes.append((float(t), int(off)))
    writes.sort()
    marks = []
    offset = 0
    with open(os.path.join(d, log), "rb") as f:
        for number, raw in enumerate(f, 1):
            offset += len(raw)
            for name, rx in rules:
                m = rx.search(raw)
                if m:
                    t = next(t for t, o in writes if o >= offset)
                    marks.append((t, name, number, m.group(0).decode().strip()))
                    break
    calls = []
    for path in sorted(glob.glob(os.path.join(d, "*.bin"))):
        out = subprocess.run([d2a, path], check=True, capture_output=True, text=True).stdout
        for m in re.finditer(r"^(MPI_\w+) entering at walltime ([\d.]+)", out, re.M):
            calls.append((float(m.group(2)), m.group(1)))
    decoder = "dumpi2ascii"
    if not calls:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        calls = __import__("hpcc-sections").otf2_calls(d)
        decoder = "otf2-print"
    t0 = min(t for t, _ in calls)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    with open(os.path.join(d, "expected", "log-times.tsv"), "w") as f:
        f.write(f"# lines of {log} dated by tools/record/log-times.py ({log} + iotimes.log)\n")
        f.write("# time_s: seconds since the trace's first event; monotonic: raw CLOCK_MONOTONIC\n")
        f.write("name\tline\ttext\ttime_s\tmonotonic\n")
        for t, name, number, text in marks:
            f.write(f"{name}\t{number}\t{text}\t{t - t0:.6f}\t{t:.9f}\n")
    per = [("before " + marks[0][1] if marks else "all", collections.Counter())]
    for t, name, number, _ in marks:
        per.append((f"after {name} (line {number})", collections.Counter()))
    for t, fn in calls:
        i = sum(1 for m in marks if m[0] <= t)
        per[i][1][fn] += 1
    with open(os.path.join(d, "expected", "log-calls.tsv"), "w") as f:
        f.write(f"# MPI calls of all ranks entered between consecutive lines of expected/log-times.tsv ({decoder})\n")
        f.write("# interval\tcalls\tby function (most first)\n")
        for label, c in per:
            f.write(f"{label}\t{sum(c.values())}\t" + " ".join(f"{k}:{v}" for k, v in c.most_common()) + "\n")


if __name__ == "__main__":
    main()
