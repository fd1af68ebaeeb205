#!/usr/bin/env python3
"""Ground truth for the logical trace of a LAMMPS or NAS run, independently of tracelogic.

    tools/record/direction-sequences.py RUN_DIR

Reads every rank's calls with dumpi2ascii, keeps the point-to-point calls (MPI_Send, MPI_Isend,
MPI_Recv, MPI_Irecv, MPI_Sendrecv) and writes each peer as a direction of LAMMPS's own processor grid
(log.lammps + procs.map; peers in a communicator made by -reorder are translated by reorder.txt):
`x+`, `x-`, ..., and `x+-` along a dimension of 2, where both neighbours are one rank. For NAS runs
(npb-*, 16 ranks) the directions are those of the benchmark's source: LU north/south/west/east
(id -+ 1, id -+ 4), SP successor/predecessor in its three directions (make_set.f), CG the row
partners col XOR 1 / XOR 2 and the transpose partner (cg.f); their communicators are MPI_Comm_dup
copies of MPI_COMM_WORLD, so peers are world ranks. Prints how many
ranks there are, how many distinct per-rank sequences of (function, direction) there are, and how
many distinct sequences of (function, direction, bytes) -- 1 means every rank runs the same logical
program.
"""
import collections
import os
import re
import subprocess
import sys

SIZES = {"MPI_DOUBLE": 8, "MPI_INT": 4, "MPI_BYTE": 1, "MPI_CHAR": 1, "MPI_LONG": 8, "MPI_LONG_LONG": 8}


def unpack(archive, into):
    """Unpack a .tar.zst (the corpus packs its traces with zstd -19) into the folder `into`."""
    subprocess.run(f'zstd -dc "{archive}" | tar xf - -C "{into}"', shell=True, check=True)


def main():
    d = sys.argv[1]
    d2a = os.environ.get("DUMPI2ASCII", "/opt/dumpi/bin/dumpi2ascii")
    name = os.path.basename(os.path.normpath(d))
    if name.startswith("npb-"):
        return nas(d, name, d2a)
    dims = [int(x) for x in re.search(r"(\d+) by (\d+) by (\d+) MPI processor grid",
                                        open(os.path.join(d, "log.lammps")).read()).groups()]
    coords = {}
    for line in open(os.path.join(d, "procs.map")):
        m = re.match(r"\s*(\d+) (\d+) (\d+): (\d+) (\d+) (\d+):", line)
        if m:
            coords[int(m.group(3))] = tuple(int(m.group(i)) - 1 for i in (4, 5, 6))
    new_to_world = {r: r for r in coords}
    ro = os.path.join(d, "reorder.txt")
    if os.path.exists(ro):
        for line in open(ro):
            if line.startswith("#"):
                continue
            i, j = map(int, line.split())
            new_to_world[j] = i

    def direction(me, peer):
        a, b = coords[me], coords[peer]
        diff = [k for k in range(3) if a[k] != b[k]]
        if len(diff) != 1:
            return "other"
        k = diff[0]
        n = dims[k]
        axis = "xyz"[k]
        if n == 2:
            return axis + "+-"
        return axis + ("+" if (a[k] + 1) % n == b[k] else "-")

    fn = lambda rank, peer, comm_world: direction(rank, peer if comm_world else new_to_world[peer])  # noqa: E731
    packed = os.path.join(d, "dumpi.tar.zst")
    if os.path.exists(packed):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            unpack(packed, tmp)
            report(tmp, d2a, fn, name)
    else:
        report(d, d2a, fn, name)


def nas(d, name, d2a):
    import tempfile

    def lu(me, peer):
        return {1: "S", -1: "N", 4: "E", -4: "W"}.get(peer - me, "other")

    def sp(me, peer):
        di, dj = (peer % 4 - me % 4) % 4, (peer // 4 - me // 4) % 4
        return {(1, 0): "1+", (3, 0): "1-", (0, 1): "2+", (0, 3): "2-", (3, 1): "3+", (1, 3): "3-"}.get((di, dj), "other")

    def cg(me, peer):
        row, col = divmod(me, 4)
        if peer == (me % 4) * 4 + me // 4:
            return "transpose"
        if peer == row * 4 + (col ^ 1):
            return "row^1"
        if peer == row * 4 + (col ^ 2):
            return "row^2"
        return "other"

    fn = {"lu": lu, "sp": sp, "cg": cg}[name[4:6]]
    with tempfile.TemporaryDirectory() as tmp:
        unpack(os.path.join(d, "dumpi.tar.zst"), tmp)
        report(tmp, d2a, lambda rank, peer, _w: fn(rank, peer), name)


def report(d, d2a, direction, name=None):
    bins = sorted(f for f in os.listdir(d) if f.endswith(".bin"))
    seqs, sized = [], []
    for rank, f in enumerate(bins):
        out = subprocess.run([d2a, os.path.join(d, f)], check=True, capture_output=True, text=True).stdout
        seq, seqb = [], []
        for block in re.split(r"\n(?=MPI_\w+ entering)", out):
            m = re.match(r"(MPI_(?:Send|Isend|Recv|Irecv|Sendrecv)) entering", block)
            if not m:
                continue
            fn = m.group(1)
            comm_world = "(MPI_COMM_WORLD)" in block
            for key, cnt_key, type_key in (("dest", "(?:send)?count", "(?:datatype|sendtype)"),
                                           ("source", "(?:recv)?count", "(?:datatype|recvtype)")):
                pm = re.search(r"^int %s=(-?\d+)" % key, block, re.M)
                if not pm:
                    continue
                peer = int(pm.group(1))
                if peer < 0:
                    continue
                cm = re.search(r"^int %s=(\d+)" % cnt_key, block, re.M)
                tm = re.search(r"^MPI_Datatype %s=\d+ \((\w+)\)" % type_key, block, re.M)
                nbytes = int(cm.group(1)) * SIZES.get(tm.group(1), 0) if cm and tm else -1
                dirn = direction(rank, peer, comm_world)
                seq.append((fn, key, dirn))
                seqb.append((fn, key, dirn, nbytes))
        seqs.append(tuple(seq))
        sized.append(tuple(seqb))
    distinct_lengths = sorted({len(q) for q in seqs})
    print(f"{name or os.path.basename(os.path.normpath(d))}: {len(bins)} ranks, "
          f"{len(seqs[0])} point-to-point operations on rank 0, "
          f"{len(set(seqs))} distinct (function, direction) sequences, "
          f"{len(set(sized))} distinct with bytes, "
          f"directions outside the layout: {sum(s.count('other') for q in seqs for s in q)}, "
          f"per-rank lengths {distinct_lengths[0]}..{distinct_lengths[-1]}")
    c = collections.Counter(x[2] for x in seqs[0])
    print("  rank 0 directions:", dict(sorted(c.items())))


if __name__ == "__main__":
    main()
