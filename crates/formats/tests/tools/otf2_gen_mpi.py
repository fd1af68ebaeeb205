"""Write an MPI-style OTF2 archive with the official library (PyPI otf2==3.2) and a JSON of
what it wrote, in tracelogic's model terms, for crates/formats/tests/otf2_generated.rs.

Usage: python3 otf2_gen_mpi.py OUTDIR NRANKS [--bare]

Per rank: a ring with MPI_Irecv/MPI_Isend/MPI_Waitall on MPI_COMM_WORLD; MPI_Comm_split into
even/odd communicators and a blocking ring (MPI_Send/MPI_Recv) inside them, with peers given as
communicator ranks; MPI_Bcast (root 3 % NRANKS), MPI_Reduce on the split communicator (root:
communicator rank 1 % size), MPI_Allgather, a non-blocking MPI_Iallreduce completed by MPI_Wait;
rank 0 runs MPI_Barrier on MPI_COMM_SELF; even rank i sends to odd rank i over an even/odd
inter-communicator (peers are ranks of the remote group); rank 1 has a second thread that calls MPI_Comm_rank.
Locations are defined in reverse rank order, so location ids differ from ranks: the world rank
comes from the COMM_LOCATIONS group. The timer runs at 2.5 GHz, so ns = ticks * 2 / 5.

With --bare no Enter/Leave is written for MPI calls (only `main`): readers must turn each MPI
event into a call named after it (MpiSend -> MPI_Send, MpiIsendComplete/MpiIrecv -> MPI_Wait,
MpiIrecvRequest -> MPI_Irecv, a collective -> its operation).

The JSON: {"comms": {name: [world ranks]}, "ranks": [{"calls": [[name, enter_ns, exit_ns,
location_index]], "p2p": [[post, complete, "Send"|"Recv", peer_world, tag, comm, bytes]],
"collectives": [[call, op, comm, root_world|null, sent, received]]}]}, calls in entry order,
operations in the order the model keeps them (by posting call, then as recorded).
"""
import json
import os
import sys

import otf2
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm, RegionRole

# The otf2 3.2 Python binding gives InterComm Comm's fields (group, parent, flags) before its
# own (groupA, groupB, parent, flags), so an InterComm cannot be created; keep name + its own.
_IC = otf2.definitions.InterComm
if [f.name for f in _IC._fields][:2] == ["name", "group"]:
    _IC._fields = (_IC._fields[0],) + _IC._fields[4:]

RESOLUTION = 2_500_000_000
UNDEF = 0xFFFFFFFF
OP_NAMES = {
    CollectiveOp.BCAST: "Bcast",
    CollectiveOp.REDUCE: "Reduce",
    CollectiveOp.ALLGATHER: "Allgather",
    CollectiveOp.ALLREDUCE: "Allreduce",
    CollectiveOp.BARRIER: "Barrier",
}


class Rank:
    """Writes one location's events and records their model meaning."""

    def __init__(self, gen, rank, writer, loc_index):
        self.gen, self.rank, self.w, self.loc = gen, rank, writer, loc_index
        self.calls, self.p2p, self.colls = gen.calls[rank], gen.p2p[rank], gen.colls[rank]
        self.isends, self.irecvs, self.nbcs = {}, {}, {}

    def new_call(self, name, t0, t1):
        key = len(self.calls)
        self.calls.append([name, t0, t1, self.loc, key])
        return key

    def mpi(self, name, t0, t1, events):
        """An MPI call `name` from t0 to t1 with MPI event records inside."""
        region = self.gen.region(name, RegionRole.FUNCTION, Paradigm.MPI)
        if not self.gen.bare:
            self.w.enter(t0, region)
            call = self.new_call(name, t0, t1)
        coll_begin = None
        for ev in events:
            kind, t = ev[0], ev[1]
            bare = self.gen.bare
            if kind == "send":
                _, _, peer, comm, tag, size = ev
                self.w.mpi_send(t, peer, self.gen.comms[comm], tag, size)
                c = self.new_call("MPI_Send", t, t) if bare else call
                self.p2p.append([c, c, "Send", self.gen.world(comm, peer, self.rank), tag, comm, size])
            elif kind == "recv":
                _, _, peer, comm, tag, size = ev
                self.w.mpi_recv(t, peer, self.gen.comms[comm], tag, size)
                c = self.new_call("MPI_Recv", t, t) if bare else call
                self.p2p.append([c, c, "Recv", self.gen.world(comm, peer, self.rank), tag, comm, size])
            elif kind == "isend":
                _, _, peer, comm, tag, size, req = ev
                self.w.mpi_isend(t, peer, self.gen.comms[comm], tag, size, req)
                c = self.new_call("MPI_Isend", t, t) if bare else call
                self.isends[req] = len(self.p2p)
                self.p2p.append([c, None, "Send", self.gen.world(comm, peer, self.rank), tag, comm, size])
            elif kind == "isend_complete":
                _, _, req = ev
                self.w.mpi_isend_complete(t, req)
                c = self.new_call("MPI_Wait", t, t) if bare else call
                self.p2p[self.isends.pop(req)][1] = c
            elif kind == "irecv_request":
                _, _, req = ev
                self.w.mpi_irecv_request(t, req)
                self.irecvs[req] = self.new_call("MPI_Irecv", t, t) if bare else call
            elif kind == "irecv":
                _, _, peer, comm, tag, size, req = ev
                self.w.mpi_irecv(t, peer, self.gen.comms[comm], tag, size, req)
                c = self.new_call("MPI_Wait", t, t) if bare else call
                self.p2p.append([self.irecvs.pop(req), c, "Recv", self.gen.world(comm, peer, self.rank), tag, comm, size])
            elif kind == "coll_begin":
                self.w.mpi_collective_begin(t)
                coll_begin = t
            elif kind == "coll_end":
                _, _, op, comm, root, sent, recvd = ev
                self.w.mpi_collective_end(t, op, self.gen.comms[comm], root, sent, recvd)
                c = self.new_call("MPI_" + OP_NAMES[op], coll_begin, t) if bare else call
                root_world = None if root == UNDEF else self.gen.world(comm, root, self.rank)
                self.colls.append([c, OP_NAMES[op], comm, root_world, sent, recvd])
            elif kind == "nbc_request":
                _, _, req = ev
                self.w.non_blocking_collective_request(t, req)
                self.nbcs[req] = (None if bare else call, t)
            elif kind == "nbc_complete":
                _, _, op, comm, root, sent, recvd, req = ev
                self.w.non_blocking_collective_complete(t, op, self.gen.comms[comm], root, sent, recvd, req)
                c, t_req = self.nbcs.pop(req)
                if c is None:
                    c = self.new_call("MPI_" + OP_NAMES[op], t_req, t)
                root_world = None if root == UNDEF else self.gen.world(comm, root, self.rank)
                self.colls.append([c, OP_NAMES[op], comm, root_world, sent, recvd])
            else:
                raise ValueError(kind)
        if not self.gen.bare:
            self.w.leave(t1, region)


class Generator:
    def __init__(self, trace, nranks, bare):
        self.d, self.n, self.bare = trace.definitions, nranks, bare
        self.regions = {}
        self.calls = [[] for _ in range(nranks)]
        self.p2p = [[] for _ in range(nranks)]
        self.colls = [[] for _ in range(nranks)]
        self.members = {}
        self.comms = {}
        self.groups = {}
        self.inter = {}

    def region(self, name, role, paradigm):
        if name not in self.regions:
            self.regions[name] = self.d.region(name, region_role=role, paradigm=paradigm)
        return self.regions[name]

    def comm(self, name, members, parent=None, self_comm=False):
        gtype = GroupType.COMM_SELF if self_comm else GroupType.COMM_GROUP
        g = self.d.group(name + " group", group_type=gtype, paradigm=Paradigm.MPI, members=[] if self_comm else members)
        self.comms[name] = self.d.comm(name, group=g, parent=parent)
        self.members[name] = members
        self.groups[name] = g
        return self.comms[name]

    def inter_comm(self, name, a, b):
        """An inter-communicator between the groups of communicators a and b."""
        self.comms[name] = self.d.inter_comm(name, self.groups[a], self.groups[b])
        self.inter[name] = (self.members[a], self.members[b])
        self.members[name] = self.members[a] + [m for m in self.members[b] if m not in self.members[a]]

    def world(self, comm, local, rank):
        if comm in self.inter:
            a, b = self.inter[comm]
            return (b if rank in a else a)[local]
        return self.members[comm][local]


def main(out, nranks, bare):
    tick = 5  # every timestamp is a multiple of 5 ticks = 2 ns
    with otf2.writer.open(out, timer_resolution=RESOLUTION) as trace:
        g = Generator(trace, nranks, bare)
        d = trace.definitions
        node = d.system_tree_node("node0", class_name="node")
        main_region = g.region("main", RegionRole.FUNCTION, Paradigm.USER)
        groups, locs = {}, {}
        for r in reversed(range(nranks)):
            groups[r] = d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                         system_tree_parent=node)
            locs[r] = d.location("Master thread", type=LocationType.CPU_THREAD, group=groups[r])
        worker = d.location("worker thread", type=LocationType.CPU_THREAD, group=groups[1 % nranks])
        d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=[locs[r] for r in range(nranks)])
        world = g.comm("MPI_COMM_WORLD", list(range(nranks)))
        for color, name in ((0, "even"), (1, "odd")):
            g.comm(name, [r for r in range(nranks) if r % 2 == color], parent=world)
        g.comm("MPI_COMM_SELF", [0], self_comm=True)
        g.inter_comm("bridge", "even", "odd")
        t_first = None
        for r in range(nranks):
            w = trace.event_writer_from_location(locs[r])
            rk = Rank(g, r, w, 0)
            t = (1_000_000 + 20 * r) * tick
            t_first = t if t_first is None else min(t_first, t)
            w.enter(t, main_region)
            t += 100 * tick
            rk.mpi("MPI_Comm_split", t, t + 30 * tick, [])
            t += 40 * tick
            right, left = (r + 1) % nranks, (r - 1) % nranks
            rk.mpi("MPI_Irecv", t, t + 5 * tick, [("irecv_request", t + 2 * tick, 1000 + r)])
            t += 10 * tick
            rk.mpi("MPI_Isend", t, t + 5 * tick,
                   [("isend", t + 2 * tick, right, "MPI_COMM_WORLD", 100 + r, 1024 * (r + 1), 2000 + r)])
            t += 10 * tick
            rk.mpi("MPI_Waitall", t, t + 40 * tick, [
                ("isend_complete", t + 10 * tick, 2000 + r),
                ("irecv", t + 20 * tick, left, "MPI_COMM_WORLD", 100 + left, 1024 * (left + 1), 1000 + r),
            ])
            t += 50 * tick
            split = "even" if r % 2 == 0 else "odd"
            size, lr = len(g.members[split]), g.members[split].index(r)
            if size > 1:
                rk.mpi("MPI_Send", t, t + 10 * tick,
                       [("send", t + 5 * tick, (lr + 1) % size, split, 7, 64 * (lr + 1))])
                t += 20 * tick
                src = (lr - 1) % size
                rk.mpi("MPI_Recv", t, t + 30 * tick, [("recv", t + 25 * tick, src, split, 7, 64 * (src + 1))])
                t += 40 * tick
            # Across the even/odd inter-communicator: peers are ranks of the other group.
            other = g.members["odd" if split == "even" else "even"]
            if lr < len(other):
                if split == "even":
                    rk.mpi("MPI_Send", t, t + 10 * tick, [("send", t + 5 * tick, lr, "bridge", 9, 32)])
                else:
                    rk.mpi("MPI_Recv", t, t + 10 * tick, [("recv", t + 5 * tick, lr, "bridge", 9, 32)])
                t += 20 * tick
            root = 3 % nranks
            sent, recvd = (256 * (nranks - 1), 0) if r == root else (0, 256)
            rk.mpi("MPI_Bcast", t, t + 30 * tick, [
                ("coll_begin", t + tick), ("coll_end", t + 29 * tick, CollectiveOp.BCAST, "MPI_COMM_WORLD", root, sent, recvd)])
            t += 40 * tick
            sroot = 1 % size
            rk.mpi("MPI_Reduce", t, t + 30 * tick, [
                ("coll_begin", t + tick),
                ("coll_end", t + 29 * tick, CollectiveOp.REDUCE, split, sroot, 8, 8 if lr == sroot else 0)])
            t += 40 * tick
            rk.mpi("MPI_Allgather", t, t + 30 * tick, [
                ("coll_begin", t + tick),
                ("coll_end", t + 29 * tick, CollectiveOp.ALLGATHER, "MPI_COMM_WORLD", UNDEF, 4, 4 * nranks)])
            t += 40 * tick
            rk.mpi("MPI_Iallreduce", t, t + 10 * tick, [("nbc_request", t + 5 * tick, 3000 + r)])
            t += 20 * tick
            rk.mpi("MPI_Wait", t, t + 20 * tick, [
                ("nbc_complete", t + 15 * tick, CollectiveOp.ALLREDUCE, "MPI_COMM_WORLD", UNDEF, 16, 16, 3000 + r)])
            t += 30 * tick
            if r == 0:
                rk.mpi("MPI_Barrier", t, t + 10 * tick, [
                    ("coll_begin", t + tick),
                    ("coll_end", t + 9 * tick, CollectiveOp.BARRIER, "MPI_COMM_SELF", UNDEF, 0, 0)])
                t += 20 * tick
            w.leave(t, main_region)
        # The worker thread of rank 1 asks for its rank while the master thread is in the ring.
        w = trace.event_writer_from_location(worker)
        t = (1_000_000 + 20 * (1 % nranks) + 153) * tick
        if not bare:
            Rank(g, 1 % nranks, w, 1).mpi("MPI_Comm_rank", t, t + 3 * tick, [])
        else:
            w.enter(t, main_region)
            w.leave(t + 3 * tick, main_region)

    def ns(ticks):
        return (ticks - t_first) * 2 // 5

    ranks = []
    for r in range(nranks):
        calls = sorted(g.calls[r], key=lambda c: c[1])  # stable: threads keep their order
        index = {c[4]: i for i, c in enumerate(calls)}
        p2p = [[index[p[0]], index[p[1]], *p[2:]] for p in g.p2p[r]]
        p2p.sort(key=lambda p: p[0])
        colls = [[index[c[0]], *c[1:]] for c in g.colls[r]]
        colls.sort(key=lambda c: c[0])
        ranks.append({
            "calls": [[c[0], ns(c[1]), ns(c[2]), c[3]] for c in calls],
            "p2p": p2p,
            "collectives": colls,
        })
    used = {"MPI_COMM_WORLD", "even", "odd", "MPI_COMM_SELF", "bridge"}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"comms": {k: v for k, v in g.members.items() if k in used}, "ranks": ranks}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), "--bare" in sys.argv[3:])
