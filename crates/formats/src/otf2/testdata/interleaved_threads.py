"""Write a 3-rank OTF2 archive with 2 threads per rank whose locations are defined thread by
thread (a rank's locations are not next to each other), requests posted on one thread and
completed on the other, a communicator created by events and MPI_COMM_SELF. Used by
crates/formats/src/otf2/tests.rs to check that reading with several threads gives the trace of
a read in one part. Needs PyPI otf2==3.2.

Usage: python interleaved_threads.py OUTDIR     (OUTDIR must not exist yet)
"""
import sys
import otf2
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm, RegionRole

NRANKS, THREADS, UNDEF = 3, 2, 0xFFFFFFFF
with otf2.writer.open(sys.argv[1], timer_resolution=1_000_000_000) as trace:
    d = trace.definitions
    node = d.system_tree_node("node0", class_name="node")
    user = [d.region(f"region {i}", region_role=RegionRole.FUNCTION, paradigm=Paradigm.USER) for i in range(4)]
    mpi = {n: d.region(n, region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI)
           for n in ["MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Barrier"]}
    groups = [d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                               system_tree_parent=node) for r in range(NRANKS)]
    # Locations defined thread by thread: a rank's locations are not next to each other.
    locs = {}
    for t in range(THREADS):
        for r in range(NRANKS):
            locs[(r, t)] = d.location(f"thread {t}", type=LocationType.CPU_THREAD, group=groups[r])
    d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
            members=[locs[(r, 0)] for r in range(NRANKS)])
    world = d.comm("MPI_COMM_WORLD", group=d.group("world", group_type=GroupType.COMM_GROUP,
                                                   paradigm=Paradigm.MPI, members=list(range(NRANKS))))
    d.group("user locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.USER,
            members=[locs[(r, 0)] for r in range(NRANKS)])
    # A communicator of a non-MPI group: created on first use by an event.
    sub = d.comm("sub comm", group=d.group("sub", group_type=GroupType.COMM_GROUP,
                                           paradigm=Paradigm.USER, members=[0, 2]))
    self_comm = d.comm("self", group=d.group("self", group_type=GroupType.COMM_SELF,
                                             paradigm=Paradigm.MPI, members=[]))
    for t in range(THREADS):
        for r in range(NRANKS):
            w = trace.event_writer_from_location(locs[(r, t)])
            ts = 1_000_000 + 7 * r + 3 * t
            # User regions entered in an order that depends on the location.
            outer, inner = user[(r + 2 * t) % 4], user[(r + 2 * t + 1) % 4]
            w.enter(ts, outer); ts += 10
            w.enter(ts, inner); ts += 10
            right, left = (r + 1) % NRANKS, (r - 1) % NRANKS
            for k in range(3):
                if t == 0:
                    # Posted here, completed on thread 1 of the same rank.
                    w.enter(ts, mpi["MPI_Irecv"]); w.mpi_irecv_request(ts + 1, 500 + 10 * r + k); w.leave(ts + 2, mpi["MPI_Irecv"]); ts += 5
                    w.enter(ts, mpi["MPI_Isend"]); w.mpi_isend(ts + 1, right, world, k, 64 * (k + 1), 600 + 10 * r + k); w.leave(ts + 2, mpi["MPI_Isend"]); ts += 5
                else:
                    ts += 40
                    w.enter(ts, mpi["MPI_Wait"]); w.mpi_isend_complete(ts + 1, 600 + 10 * r + k); w.leave(ts + 2, mpi["MPI_Wait"]); ts += 5
                    w.enter(ts, mpi["MPI_Wait"]); w.mpi_irecv(ts + 1, left, world, k, 64 * (k + 1), 500 + 10 * r + k); w.leave(ts + 2, mpi["MPI_Wait"]); ts += 5
            w.leave(ts, inner); ts += 10
            if t == 1 and r != 1:
                w.enter(ts, mpi["MPI_Allreduce"]); w.mpi_collective_begin(ts + 1)
                w.mpi_collective_end(ts + 5, CollectiveOp.ALLREDUCE, sub, UNDEF, 8, 8)
                w.leave(ts + 6, mpi["MPI_Allreduce"]); ts += 10
            if t == 0 and r == 1:
                w.enter(ts, mpi["MPI_Send"]); w.mpi_send(ts + 1, 0, self_comm, 9, 16); w.leave(ts + 2, mpi["MPI_Send"]); ts += 5
            if t == 1:
                w.enter(ts, mpi["MPI_Barrier"]); w.mpi_collective_begin(ts + 1)
                w.mpi_collective_end(ts + 5, CollectiveOp.BARRIER, world, UNDEF, 0, 0)
                w.leave(ts + 6, mpi["MPI_Barrier"]); ts += 10
            w.leave(ts, outer)
