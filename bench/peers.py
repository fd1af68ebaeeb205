"""Peer side of bench/run: one measurement per process, JSON on stdout.

Run by bench/run inside bench/.venv (which holds the peers installed from PyPI):

    python peers.py iso TOOL APP.edges REF.edges TIMEOUT
        TOOL in igraph-vf2, igraph-bliss, networkx-vf2, networkx-vf2pp, pynauty.
        Proves APP isomorphic to REF (the reference numbering of the candidate topology) and
        returns the mapping, which is verified here edge by edge before reporting.
    python peers.py ingest-dumpi DIR TIMEOUT     pydumpi callbacks over every rank file
    python peers.py ingest-otf2 ANCHOR TIMEOUT   otf2 reader iterating every event
    python peers.py patterns-sa SEQ.u32          pydivsufsort: suffix array (libdivsufsort) and
        LCP array (Kasai, Cython) of the event sequence (u32 little endian) that
        `tracelogic-bench patterns` wrote, with checksums to compare with tracelogic's arrays.

The ingest readers build the same communication matrix as tracelogic (bytes and messages
sent per rank pair) so that the work is comparable; they stop between files (DUMPI) or
between events (OTF2) once TIMEOUT seconds are spent and report the share they read.
Times are the measured call only (graph or file loading excluded for iso; everything
included for ingest), wall and CPU seconds; peak RSS is the process's.
"""

import json
import os
import resource
import signal
import sys
import time


def read_edges(path):
    with open(path) as f:
        n, m = map(int, f.readline().split())
        edges = [tuple(map(int, line.split())) for line in f if line.strip()]
    if len(edges) != m:
        raise ValueError(f"{path}: header says {m} edges, found {len(edges)}")
    return n, edges


def verify(mapping, n, app_edges, ref_edges):
    """True when `mapping` (list app node -> ref node) is a bijection carrying edges to edges."""
    if mapping is None or len(mapping) != n or sorted(mapping) != list(range(n)):
        return False
    if len(app_edges) != len(ref_edges):
        return False
    ref = set()
    for u, v in ref_edges:
        ref.add((u, v))
        ref.add((v, u))
    return all((mapping[u], mapping[v]) in ref for u, v in app_edges)


class Timeout(Exception):
    pass


def alarm(seconds):
    """Interrupt pure-Python searches after `seconds` (C searches are killed by the caller)."""

    def handler(signum, frame):
        raise Timeout()

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def iso(tool, app_path, ref_path, timeout):
    n, app = read_edges(app_path)
    n2, ref = read_edges(ref_path)
    if n != n2:
        return {"isomorphic": False, "seconds": 0.0, "cpu_seconds": 0.0, "mapping_verified": False}
    if tool.startswith("igraph"):
        import igraph

        g1 = igraph.Graph(n=n, edges=app)
        g2 = igraph.Graph(n=n, edges=ref)
        alarm(timeout)
        t, c = time.perf_counter(), time.process_time()
        if tool == "igraph-vf2":
            ok, m12, _ = g1.isomorphic_vf2(g2, return_mapping_12=True)
        else:
            ok, m12, _ = g1.isomorphic_bliss(g2, return_mapping_12=True)
        t, c = time.perf_counter() - t, time.process_time() - c
        mapping = list(m12) if ok else None
    elif tool.startswith("networkx"):
        import networkx as nx

        g1, g2 = nx.Graph(), nx.Graph()
        g1.add_nodes_from(range(n))
        g2.add_nodes_from(range(n))
        g1.add_edges_from(app)
        g2.add_edges_from(ref)
        alarm(timeout)
        t, c = time.perf_counter(), time.process_time()
        if tool == "networkx-vf2":
            gm = nx.algorithms.isomorphism.GraphMatcher(g1, g2)
            ok = gm.is_isomorphic()
            d = gm.mapping if ok else None
        else:
            d = nx.vf2pp_isomorphism(g1, g2)
            ok = d is not None
        t, c = time.perf_counter() - t, time.process_time() - c
        mapping = [d[v] for v in range(n)] if ok else None
    elif tool == "pynauty":
        import pynauty

        def graph(edges):
            adj = {v: [] for v in range(n)}
            for u, v in edges:
                adj[u].append(v)
            return pynauty.Graph(n, adjacency_dict=adj)

        g1, g2 = graph(app), graph(ref)
        alarm(timeout)
        t, c = time.perf_counter(), time.process_time()
        ok = pynauty.certificate(g1) == pynauty.certificate(g2)
        mapping = None
        if ok:
            lab1, lab2 = pynauty.canon_label(g1), pynauty.canon_label(g2)
            pos1 = [0] * n
            for i, v in enumerate(lab1):
                pos1[v] = i
            mapping = [lab2[pos1[v]] for v in range(n)]
        t, c = time.perf_counter() - t, time.process_time() - c
    else:
        raise ValueError(f"unknown tool {tool}")
    return {
        "isomorphic": bool(ok),
        "seconds": t,
        "cpu_seconds": c,
        "mapping_verified": verify(mapping, n, app, ref),
    }


def ingest_dumpi(folder, timeout):
    from pydumpi import DumpiTrace

    bins = sorted(
        (os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".bin")),
        key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]),
    )
    matrix = {}
    count = [0]

    class Reader(DumpiTrace):
        def __init__(self, path, rank):
            self.rank = rank
            super().__init__(path)

        def _send(self, data, thread, cpu, wall, perf):
            count[0] += 1
            key = (self.rank, data.dest)
            b, m = matrix.get(key, (0, 0))
            matrix[key] = (b + data.count * self.type_sizes[data.datatype], m + 1)

        def _other(self, data, thread, cpu, wall, perf):
            count[0] += 1

        on_send = on_isend = _send
        on_recv = on_irecv = on_wait = on_waitall = on_sendrecv = _other
        on_allreduce = on_barrier = on_bcast = on_reduce = on_alltoall = on_allgather = _other
        on_init = on_finalize = on_comm_rank = on_comm_size = _other

    t, c = time.perf_counter(), time.process_time()
    done_bytes = total_bytes = 0
    files_done = 0
    for path in bins:
        total_bytes += os.path.getsize(path)
    for rank, path in enumerate(bins):
        if time.perf_counter() - t > timeout:
            break
        with Reader(path, rank) as r:
            r.read_stream()
        done_bytes += os.path.getsize(path)
        files_done += 1
    return {
        "seconds": time.perf_counter() - t,
        "cpu_seconds": time.process_time() - c,
        "records": count[0],
        "bytes_read": done_bytes,
        "bytes_total": total_bytes,
        "complete": files_done == len(bins),
        "matrix_bytes": sum(b for b, _ in matrix.values()),
        "matrix_messages": sum(m for _, m in matrix.values()),
    }


def ingest_otf2(anchor, timeout):
    import otf2

    folder = os.path.dirname(anchor)
    total_bytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)
    t, c = time.perf_counter(), time.process_time()
    count = 0
    sent_bytes = sent_messages = 0
    complete = True
    with otf2.reader.open(anchor) as trace:
        for _location, event in trace.events:
            count += 1
            if isinstance(event, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                sent_bytes += event.msg_length
                sent_messages += 1
            if count % 4096 == 0 and time.perf_counter() - t > timeout:
                complete = False
                break
    return {
        "seconds": time.perf_counter() - t,
        "cpu_seconds": time.process_time() - c,
        "records": count,
        "bytes_total": total_bytes,
        "complete": complete,
        "matrix_bytes": sent_bytes,
        "matrix_messages": sent_messages,
    }


def patterns_sa(path):
    """The two stages a suffix-array repeat finder runs before it walks the LCP intervals: the
    suffix array and the LCP array (the walk itself is not timed here, so this is a lower bound
    of such a finder's time). CPU seconds of this process."""
    import numpy as np
    from pydivsufsort import divsufsort, kasai

    seq = np.fromfile(path, dtype="<u4")
    c, t = time.process_time(), time.perf_counter()
    sa = divsufsort(seq)
    sa_cpu, sa_wall = time.process_time() - c, time.perf_counter() - t
    c, t = time.process_time(), time.perf_counter()
    lcp = kasai(seq, sa)
    lcp_cpu, lcp_wall = time.process_time() - c, time.perf_counter() - t
    idx = np.arange(len(sa), dtype=np.uint64)
    checksum = int(np.sum(idx * sa.astype(np.uint64), dtype=np.uint64))
    # Kasai's lcp[i] is the prefix shared by suffixes sa[i] and sa[i+1]; tracelogic's lcp[i] that
    # of sa[i-1] and sa[i]: the same values shifted by one, so their sums agree.
    lcp_sum = int(np.sum(lcp[lcp > 0].astype(np.uint64)))
    return {"events": int(len(seq)), "suffix_array_cpu": sa_cpu, "suffix_array_wall": sa_wall,
            "lcp_cpu": lcp_cpu, "lcp_wall": lcp_wall, "sa_checksum": checksum, "lcp_sum": lcp_sum,
            "max_rss_kb": peak_rss_kb()}


def peak_rss_kb():
    """VmHWM of this process: ru_maxrss after exec also counts the parent's memory."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main():
    cmd = sys.argv[1]
    if cmd == "iso":
        try:
            out = iso(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
        except Timeout:
            out = {"timeout": True}
    elif cmd == "ingest-dumpi":
        out = ingest_dumpi(sys.argv[2], float(sys.argv[3]))
    elif cmd == "ingest-otf2":
        out = ingest_otf2(sys.argv[2], float(sys.argv[3]))
    elif cmd == "patterns-sa":
        out = patterns_sa(sys.argv[2])
    else:
        raise SystemExit(f"peers.py: unknown command {cmd}")
    out["max_rss_kb"] = peak_rss_kb()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
