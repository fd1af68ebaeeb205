#!/usr/bin/env python3
"""Late-sender waiting per rank from the tracer's decoder, independently of tracelogic.

    tools/record/late-sender.py DUMPI_DIR > RUN/expected/late-sender.txt

For programs that receive with MPI_Irecv and complete with MPI_Wait/Waitall/Waitany/Waitsome
(Meep): reads every rank's `dumpi2ascii` output, matches each receive to its send in MPI's
non-overtaking order (the k-th receive from rank s with tag t on a communicator takes the k-th
send of s to this rank with that tag), finds the wait call that completed it (the request id
among the call's completed `indices`) and takes Scalasca's late sender: min(send enter, wait
exit) − wait enter when positive; a wait completing several receives counts the largest once.
Output: `RANK NANOSECONDS` per rank, then `total NANOSECONDS`. Times are DUMPI's nanoseconds.
Blocking receives (MPI_Recv, MPI_Sendrecv) and wildcard sources are not handled: the script
stops if it meets one.
"""
import collections, glob, os, re, subprocess, sys

D2A = os.environ.get("DUMPI2ASCII", "/opt/dumpi/bin/dumpi2ascii")
WAITS = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome"}


def ns(text):
    sec, frac = text.split(".")
    return int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])


def calls(path):
    """(function, enter ns, exit ns, {argument: value text}) per call of one rank file."""
    out = subprocess.run([D2A, path], check=True, capture_output=True, text=True).stdout
    cur = None
    for line in out.splitlines():
        m = re.match(r"(MPI_\w+) (entering|returning) at walltime ([\d.]+)", line)
        if m:
            if m.group(2) == "entering":
                cur = [m.group(1), ns(m.group(3)), None, {}]
            elif cur is not None:
                cur[2] = ns(m.group(3))
                yield cur
                cur = None
        elif cur is not None:
            a = re.match(r"\S+(?: \S+)* (\w+)(?:\[\d+\])?=(.*)$", line)
            if a:
                cur[3][a.group(1)] = a.group(2)


def ints(text):
    return [int(x) for x in re.findall(r"-?\d+", text.split("(")[0] if "[" not in text else text)]


def main():
    d = sys.argv[1]
    files = sorted(glob.glob(os.path.join(d, "*.bin")))
    sends = collections.defaultdict(list)  # (src, dst, tag, comm) -> [send enter ns]
    recvs = []  # per rank: list of (key, wait enter, wait exit, wait id)
    for r, f in enumerate(files):
        open_recv, done, k, posted = {}, [], 0, 0
        for fn, enter, exit_, args in calls(f):
            if fn in ("MPI_Isend", "MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Issend"):
                dest = int(args["dest"])
                if dest >= 0:
                    sends[(r, dest, int(args["tag"]), args["comm"].split()[0])].append(enter)
            elif fn == "MPI_Irecv":
                src = int(args["source"])
                if src < 0:
                    sys.exit(f"rank {r}: wildcard or null source, not handled")
                open_recv[ints(args["request"])[0]] = ((src, r, int(args["tag"]), args["comm"].split()[0]), posted)
                posted += 1
            elif fn in ("MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace"):
                sys.exit(f"rank {r}: {fn} not handled")
            elif fn in WAITS:
                if fn == "MPI_Wait":
                    ids = ints(args["request"])
                else:
                    req = ints(args["requests"])
                    if fn == "MPI_Waitall":
                        ids = req
                    elif fn == "MPI_Waitany":
                        ids = [req[int(args["index"])]] if int(args["index"]) >= 0 else []
                    else:
                        ids = [req[i] for i in ints(args.get("indices", "[]"))]
                for rid in ids:
                    if rid in open_recv:
                        done.append((open_recv.pop(rid), enter, exit_, k))
                k += 1
        recvs.append(done)
    # Match receives to sends in order per (src, dst, tag, comm).
    taken = collections.Counter()
    order = []
    for r, done in enumerate(recvs):
        for (key, seq), enter, exit_, k in done:
            order.append((r, seq, key, enter, exit_, k))
    order.sort()  # each rank's receives in posting order: MPI matches them in that order
    late = collections.defaultdict(int)  # (rank, wait id) -> largest
    for r, _, key, enter, exit_, k in order:
        i = taken[key]
        taken[key] += 1
        if i >= len(sends[key]):
            sys.exit(f"rank {r}: no send for receive {key}")
        w = min(sends[key][i], exit_) - enter
        if w > 0:
            late[(r, k)] = max(late[(r, k)], w)
    per = collections.Counter()
    for (r, _), w in late.items():
        per[r] += w
    for r in range(len(files)):
        print(r, per[r])
    print("total", sum(per.values()))


main()
