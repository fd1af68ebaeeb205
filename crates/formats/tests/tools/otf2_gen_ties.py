"""Write an OTF2 archive (PyPI otf2==3.2) whose locations share many timestamps, to pin down
the order in which the official reader merges equal-time events of different locations.

Usage: python3 otf2_gen_ties.py OUTDIR NLOCATIONS
Location r writes 40 Enter/Leave pairs; pair i at time 10 + 2 * (i // (1 + r % 3)), so several
pairs of one location and pairs of many locations fall on the same tick.
"""
import sys

import otf2
from otf2.enums import GroupType, Paradigm


def main(out, n):
    with otf2.writer.open(out, timer_resolution=10**9) as trace:
        d = trace.definitions
        node = d.system_tree_node("node")
        locs = [d.location("thread", group=d.location_group(f"rank {r}", system_tree_parent=node)) for r in range(n)]
        d.group("locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        d.comm("world", group=d.group("world group", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                      members=list(range(n))))
        regions = [d.region(f"r{i}") for i in range(4)]
        for r, loc in enumerate(locs):
            w = trace.event_writer_from_location(loc)
            for i in range(40):
                t = 10 + (i // (1 + r % 3)) * 2
                w.enter(t, regions[(i + r) % 4])
                w.leave(t, regions[(i + r) % 4])


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
