#!/usr/bin/env python3
"""One table of every analysis on a folder of recorded runs (the held-out set, docs/corpus.md).

    tools/record/check-heldout.py [--tl target/release/tracelogic] [--timeout S] ROOT [RUN ...]

ROOT holds one folder per run, as tools/record/heldout.sh writes them. For each run (or only the
named ones) it runs tracelogic's summary, topology, logical (compressed, with its verification),
patterns and phases and prints one Markdown row: ranks, calls, topology, logical length and
whether every rank's expansion is exact in structure and bytes, the first pattern's occurrences
and share of events, the number of phases and sections. Where the run has a per-rank truth from
the tracer's own decoder (expected/*per-rank.txt, tools/record/per-rank.sh) the summary's
point-to-point sends are checked against it (column `sends=decoder`). A `pairs.txt` in ROOT
(lines `A B expected`, expected `similar` or `different`) adds a table of `compare` verdicts.

The truth columns come from the decoders and the run's README; the other columns are tracelogic's
figures, to be read against the applications' own logs (their README says where).
"""
import argparse
import json
import os
import subprocess
import sys
import time


def trace_of(run):
    """The trace inside a run folder: an archive, an OTF2 anchor file or the folder itself."""
    for name in ("trace.tar.zst", "dumpi.tar.zst"):
        p = os.path.join(run, name)
        if os.path.exists(p):
            return p
    anchor = os.path.join(run, "trace", "traces.otf2")
    if os.path.exists(anchor):
        return anchor
    if any(f.endswith(".bin") for f in os.listdir(run)):
        return run
    return None


def topology_cell(t, err):
    """The whole graph's match; else equal disjoint cliques, or every component's match (a
    disconnected graph, e.g. MrBayes's runs); else the grid the program declared, when it names
    the run; else none."""
    if t and t.get("match"):
        return t["match"]["label"]
    if t and t.get("cliques"):
        return t["cliques"]["label"]
    comps = (t or {}).get("components") or []
    labels = [((c.get("identification") or {}).get("match") or {}).get("label") for c in comps]
    if labels and all(labels):
        return "components: " + ", ".join(labels)
    declared = (t or {}).get("name_as_declared")
    if declared:
        return f"{declared} (declared; no shape of the library matches)"
    return f"none ({err or 'no match'})"


def tl(args, exe, timeout):
    t0 = time.time()
    try:
        out = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout {timeout}s", time.time() - t0
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines() or out.stdout.strip().splitlines()
        return None, (lines[-1] if lines else "failed").removeprefix("tracelogic: "), time.time() - t0
    return json.loads(out.stdout), None, time.time() - t0


def decoder_sends(run):
    exp = os.path.join(run, "expected")
    if not os.path.isdir(exp):
        return None
    for f in sorted(os.listdir(exp)):
        if f.endswith("per-rank.txt"):
            total = 0
            for line in open(os.path.join(exp, f)):
                parts = line.split()
                if len(parts) >= 2:
                    total += int(parts[1])
            return total
    return None


def row(run, exe, timeout):
    name = os.path.basename(run.rstrip("/"))
    trace = trace_of(run)
    if trace is None:
        return f"| {name} | no trace found |"
    cells = [name]
    s, err, _ = tl(["summary", "--json", trace], exe, timeout)
    if s is None:
        return f"| {name} | summary failed: {err} |"
    truth = decoder_sends(run)
    cells += [str(s["ranks"]), f'{s["calls"]:,}']
    cells.append("—" if truth is None else ("yes" if truth == s["p2p_messages"] else f'no ({s["p2p_messages"]} vs {truth})'))
    t, err, _ = tl(["topology", "--json", trace], exe, timeout)
    cells.append(topology_cell(t, err))
    lg, err, secs = tl(["logical", "--compress", "--json", trace], exe, timeout)
    if lg is None:
        cells += [f"failed: {err}", "", ""]
    else:
        per = lg["verification"]["per_rank"]
        st = sum(1 for r in per if r["structure_exact"])
        by = sum(1 for r in per if r["bytes_exact"])
        cells += [f'{lg["raw_length"]:,} → {lg["compressed_length"]:,}', f"{st}/{len(per)}, {by}/{len(per)}", f"{secs:.1f}"]
    p, err, _ = tl(["patterns", "--json", trace], exe, timeout)
    if p is None or not p.get("communication_patterns"):
        cells.append(f"none ({err})" if err else "none")
    else:
        top = p["communication_patterns"][0]
        share = top["events_covered"] / max(p["events"], 1)
        cells.append(f"{top['occurrences']} × {len(top['ranks'])} ranks, {100 * share:.1f} %")
    ph, err, _ = tl(["phases", "--json", trace], exe, timeout)
    cells.append(f'{len(ph["phases"])} / {len(ph["sections"])}' if ph else f"failed: {err}")
    return "| " + " | ".join(cells) + " |"


def compare_rows(root, exe, timeout, runs):
    """Pairs of ROOT/pairs.txt and ROOT/*-pairs.txt whose two runs are both among `runs` and
    recorded (a pair naming a run not recorded here is skipped)."""
    files = sorted(f for f in os.listdir(root) if f == "pairs.txt" or f.endswith("-pairs.txt"))
    pairs, seen = [], set()
    for f in files:
        for line in open(os.path.join(root, f)):
            parts = line.split()
            if len(parts) < 3 or line.startswith("#") or tuple(parts[:2]) in seen:
                continue
            if parts[0] in runs and parts[1] in runs:
                seen.add(tuple(parts[:2]))
                pairs.append(parts[:3])
    if not pairs:
        return
    print("\n| A | B | expected | θ | ε | operations | verdict |\n|---|---|---|---|---|---|---|")
    for a, b, want in pairs:
        c, err, _ = tl(["compare", "--json", trace_of(os.path.join(root, a)), trace_of(os.path.join(root, b))], exe, timeout)
        if c is None:
            print(f"| {a} | {b} | {want} | failed: {err} | | | |")
            continue
        pair = c.get("pairs", [c])[0] if isinstance(c.get("pairs"), list) else c
        theta, eps, sim = pair.get("theta"), pair.get("epsilon"), pair.get("similar")
        verdict = "similar" if sim else "different"
        mark = "" if verdict == want else " **wrong**"
        if pair.get("classification_certain") is False:
            mark += " (uncertain)"
        fmt = lambda x: f"{x:.3f}" if isinstance(x, (int, float)) else str(x)
        ops = pair.get("operation_mix_similarity")
        print(f"| {a} | {b} | {want} | {fmt(theta)} | {fmt(eps)} | {fmt(ops)} | {verdict}{mark} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tl", default=os.environ.get("TL", "target/release/tracelogic"))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("root")
    ap.add_argument("runs", nargs="*")
    a = ap.parse_args()
    runs = a.runs or sorted(d for d in os.listdir(a.root) if os.path.isdir(os.path.join(a.root, d)))
    print("| run | ranks | calls | sends=decoder | topology | logical raw → compressed | exact structure, bytes | logical s | first pattern | phases / sections |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(row(os.path.join(a.root, r), a.tl, a.timeout), flush=True)
    recorded = [r for r in runs if os.path.isdir(os.path.join(a.root, r))]
    compare_rows(a.root, a.tl, a.timeout, set(recorded))


if __name__ == "__main__":
    sys.exit(main())
