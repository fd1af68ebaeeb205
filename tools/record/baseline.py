#!/usr/bin/env python3
"""Measures what tracelogic's analyses say on every run of tests/data/apps (the baseline written into
tests/data/apps/EXPECTED.md). Not a test: it prints numbers, the truth to hold them against is in
EXPECTED.md and each run's README.

    tools/record/baseline.py [TRACELOGIC_BINARY]      (default target/release/tracelogic)
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APPS = os.path.join(ROOT, "tests", "data", "apps")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "tracelogic")


def trace(name):
    d = os.path.join(APPS, name)
    p = os.path.join(d, "dumpi.tar.zst")
    return p if os.path.exists(p) else d


def cli(*args):
    t = time.monotonic()
    o = subprocess.run([BIN, *args, "--json"], capture_output=True, text=True)
    dt = time.monotonic() - t
    if o.returncode != 0:
        return None, dt, o.stderr.strip().splitlines()[-1] if o.stderr.strip() else f"exit {o.returncode}"
    return json.loads(o.stdout), dt, None


BIG_HPCC = ("MPIRandomAccess", "MPIRandomAccess_LCG", "PTRANS", "MPIFFT", "LatencyBandwidth", "HPL")


def sections(name):
    """The dated ground-truth intervals of a run: hpcc's communicating sections or LAMMPS's stages."""
    out = []
    p = os.path.join(APPS, name, "expected", "sections.tsv")
    if os.path.exists(p):
        for line in open(p):
            if line.startswith("#") or line.startswith("section"):
                continue
            s, b, e, *_ = line.split("\t")
            if s in BIG_HPCC:
                out.append((s, float(b), float(e)))
    p = os.path.join(APPS, name, "expected", "stages.tsv")
    if os.path.exists(p):
        for line in open(p):
            if line.startswith("#") or line.startswith("stage"):
                continue
            n, kind, _f, _l, b, e, *_ = line.split("\t")
            out.append((f"{n} {kind}", float(b), float(e)))
    return out


def main():
    runs = sorted(d for d in os.listdir(APPS) if os.path.isdir(os.path.join(APPS, d)))
    print("## logical (rank 0's logical trace, verification on every rank)\n")
    print("| run | topology | from rank | maximal | records | compressed | ratio | verification overall | per-rank min..max | ranks < 100 % | direction agreement | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        v, dt, err = cli("logical", trace(r))
        if err:
            print(f"| {r} | error: {err} |||||||||| {dt:.1f} |")
            continue
        ver = v["verification"]
        shares = [x["share"] for x in ver["per_rank"]]
        print(f"| {r} | {v['topology']['label']} | {v['ranks_used']} | {v['maximal']} | {v['raw_length']} | "
              f"{v['compressed_length']} | {v['ratio']:.1f} | {100 * ver['overall_share']:.1f} % | "
              f"{100 * min(shares):.1f}..{100 * max(shares):.1f} % | {len(ver['ranks_below_full'])} | "
              f"{v['directions_from']['agreement']:.3f} | {dt:.1f} |")
    print("\n## patterns\n")
    print("| run | events | in patterns | communication patterns | on all ranks | largest (ranks x occurrences) | s |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        v, dt, err = cli("patterns", trace(r))
        if err:
            print(f"| {r} | error: {err} ||||| {dt:.1f} |")
            continue
        pats = v["communication_patterns"]
        n = max((len(p["ranks"]) for p in pats), default=0)
        nranks = len(v["rank_patterns"])
        allr = sum(1 for p in pats if len(p["ranks"]) == nranks)
        top = sorted(pats, key=lambda p: -len(p["ranks"]) * p["occurrences"])[:3]
        tops = ", ".join(f"#{p['id']}: {len(p['ranks'])}x{p['occurrences']}" for p in top)
        print(f"| {r} | {v['events']} | {v['events_in_patterns']} | {len(pats)} | {allr} | {tops} | {dt:.1f} |")
    print("\n## phases\n")
    print("| run | sequence | phases | nearest phase boundary to each dated section's begin/end | s |")
    print("|---|---|---|---|---|")
    for r in runs:
        v, dt, err = cli("phases", trace(r))
        if err:
            print(f"| {r} | error: {err} ||| {dt:.1f} |")
            continue
        ph = v["phases"]
        note = ""
        sec = sections(r)
        if sec:
            bounds = sorted({p["time"][0] / 1e9 for p in ph} | {p["time"][1] / 1e9 for p in ph})
            parts = []
            for s, b, e in sec:
                db = min(abs(x - b) for x in bounds)
                de = min(abs(x - e) for x in bounds)
                parts.append(f"{s} {1e3 * db:.2f}/{1e3 * de:.2f} ms")
            note = "; ".join(parts)
        print(f"| {r} | {v['sequence_length']} | {len(ph)} | {note} | {dt:.1f} |")
    print("\n## compare\n")
    print("| runs | θ | θ temporal/volume/spatial | ε | verdict | pairing | s |")
    print("|---|---|---|---|---|---|---|")
    pairs = [("lammps-melt-12", "lammps-melt-12-xzy"), ("lammps-melt-12", "lammps-melt-12-1x3x4"),
             ("lammps-melt-27", "lammps-melt-27-reorder"),
             ("npb-lu.S.16", "npb-lu.S.16-rankfile"), ("npb-lu.S.16", "npb-sp.S.16"), ("npb-lu.S.16", "npb-cg.S.16"),
             ("npb-sp.S.16", "npb-cg.S.16")]
    for a, b in pairs:
        v, dt, err = cli("compare", trace(a), trace(b))
        if err:
            print(f"| {a} vs {b} | error: {err} ||||| {dt:.1f} |")
            continue
        verdict = "similar" if v["similar"] else "not similar"
        print(f"| {a} vs {b} | {v['theta']:.3f} | {v['theta_temporal']:.3f}/{v['theta_volume']:.3f}/{v['theta_spatial']:.3f} | "
              f"{v['epsilon']:.3f} | {verdict} | {v['pairing']['by']} | {dt:.1f} |")


if __name__ == "__main__":
    main()
