#!/usr/bin/env python3
"""Dates the stages of a LAMMPS run on its DUMPI trace's time axis, independently of tracelogic.

    tools/record/lammps-phases.py RUN_DIR

RUN_DIR holds log.lammps, iotimes.log (the iotimes shim: CLOCK_MONOTONIC time and file size at every
flush of log.lammps; the input sets `thermo_modify flush yes`) and the DUMPI files (same clock). A
log line is dated by the first flush after it was written. A stage (a `minimize` or `run`) is a
thermo table: it begins when its first thermo line (step 0 of the stage, written after the stage's
setup) is out and ends when its "Loop time of ..." line is out. Writes RUN_DIR/expected/stages.tsv:
stage, first and last step, begin and end in seconds since the trace's first event (the earliest
"entering" time of any rank in dumpi2ascii), and the raw CLOCK_MONOTONIC times; and
RUN_DIR/expected/stage-calls.tsv: the calls of all ranks entered before, in and between the stages,
by function, with the point-to-point bytes sent by MPI_Send (MPI_DOUBLE and MPI_INT payloads).
"""
import collections
import glob
import os
import re
import subprocess
import sys


def main():
    d = sys.argv[1]
    d2a = os.environ.get("DUMPI2ASCII", "/opt/dumpi/bin/dumpi2ascii")
    flushes = sorted((float(t), int(o)) for t, _pid, o in (l.split() for l in open(os.path.join(d, "iotimes.log"))))
    stages = []
    offset = 0
    current = None
    kind = None
    with open(os.path.join(d, "log.lammps"), "rb") as f:
        for raw in f:
            offset += len(raw)
            line = raw.decode(errors="replace")
            if re.match(r"\s*minimize\s", line):
                kind = "minimize"
            elif re.match(r"\s*run\s", line):
                kind = "run"
            m = re.match(r"\s+(\d+)\s+[-\d.e+]+\s", line)
            if m and line.split()[0].isdigit() and kind:
                t = next(t for t, o in flushes if o >= offset)
                if current is None:
                    current = {"kind": kind, "first": int(m.group(1)), "begin": t}
                current["last"] = int(m.group(1))
            if line.startswith("Loop time of") and current is not None:
                current["end"] = next(t for t, o in flushes if o >= offset)
                stages.append(current)
                current = None
    t0 = None
    bounds = []
    for i, s in enumerate(stages):
        bounds += [(s["begin"], f"stage {i + 1} ({s['kind']})"), (s["end"], f"after stage {i + 1}")]
    labels = ["before stage 1"] + [b for _, b in bounds]
    calls = {b: collections.Counter() for b in labels}
    sent = {b: 0 for b in labels}
    for path in glob.glob(os.path.join(d, "*.bin")):
        out = subprocess.run([d2a, path], check=True, capture_output=True, text=True).stdout
        m = re.search(r"^MPI_\w+ entering at walltime ([\d.]+)", out, re.M)
        if m and (t0 is None or float(m.group(1)) < t0):
            t0 = float(m.group(1))
        for block in re.split(r"\n(?=MPI_\w+ entering)", out):
            m = re.match(r"(MPI_\w+) entering at walltime ([\d.]+)", block)
            if not m:
                continue
            t = float(m.group(2))
            label = labels[0]
            for bt, b in bounds:
                if bt <= t:
                    label = b
            calls[label][m.group(1)] += 1
            if m.group(1) == "MPI_Send":
                c = re.search(r"^int count=(\d+)", block, re.M)
                ty = re.search(r"^MPI_Datatype datatype=\d+ \((\w+)\)", block, re.M)
                if c and ty:
                    sent[label] += int(c.group(1)) * {"MPI_DOUBLE": 8, "MPI_INT": 4}.get(ty.group(1), 0)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    with open(os.path.join(d, "expected", "stages.tsv"), "w") as f:
        f.write("# LAMMPS stages dated by tools/record/lammps-phases.py (log.lammps + iotimes.log)\n")
        f.write("# times in seconds since the trace's first event; monotonic = raw CLOCK_MONOTONIC\n")
        f.write("stage\tkind\tfirst_step\tlast_step\tbegin_s\tend_s\tbegin_monotonic\tend_monotonic\n")
        for i, s in enumerate(stages):
            f.write(f"{i + 1}\t{s['kind']}\t{s['first']}\t{s['last']}\t{s['begin'] - t0:.6f}\t{s['end'] - t0:.6f}\t"
                    f"{s['begin']:.9f}\t{s['end']:.9f}\n")
    with open(os.path.join(d, "expected", "stage-calls.tsv"), "w") as f:
        f.write("# MPI calls of all ranks entered in each interval of expected/stages.tsv (dumpi2ascii)\n")
        f.write("# interval\tcalls\tMPI_Send bytes\tby function (most first)\n")
        for b in labels:
            c = calls[b]
            fns = " ".join(f"{k}={n}" for k, n in sorted(c.items(), key=lambda x: (-x[1], x[0])))
            f.write(f"{b}\t{sum(c.values())}\t{sent[b]}\t{fns}\n")


if __name__ == "__main__":
    main()
