"""Per-function call counts and times of DUMPI traces from the official reader (PyPI
pydumpi==0.1.3, which wraps sst-dumpi's libundumpi), for tests/profile.rs.

Usage: python3 dumpi_times.py FILE.bin [FILE.bin ...]

Prints one JSON object: for each file (in the order given), per MPI function the number of
records and the sum of their wall-clock durations (stop - start) in nanoseconds, and the sum of
the gaps between consecutive records (start of one minus stop of the previous).
"""
import contextlib
import json
import os
import sys

from pydumpi import DumpiTrace
from pydumpi.callbacks import CALLBACK, DumpiCallbacks

errors = []


def ns(clock):
    return clock.sec * 1_000_000_000 + clock.nsec


def time_file(path):
    functions = {}
    state = {"last": None, "gaps": 0}
    trace = DumpiTrace(path)
    keep = []

    def make(field):
        short = field[3:]
        name = "MPI_" + short[0].upper() + short[1:]

        def callback(data, thread, cpu, wall, perf, userarg):
            # ctypes ignores exceptions raised in callbacks: record them and fail at the end.
            try:
                start, stop = ns(wall.contents.start), ns(wall.contents.stop)
                entry = functions.setdefault(name, [0, 0])
                entry[0] += 1
                entry[1] += stop - start
                if state["last"] is not None:
                    state["gaps"] += start - state["last"]
                state["last"] = stop
            except Exception as e:  # noqa: BLE001
                errors.append(f"{path}: {name}: {e!r}")
            return 1

        return CALLBACK(callback)

    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        trace.open()
        for field, _ in DumpiCallbacks._fields_:
            if field.startswith("on_function_"):
                continue
            cb = make(field)
            keep.append(cb)
            setattr(trace.cbacks, field, cb)
        trace.read_stream()
        trace.close()
    return {"file": os.path.basename(path), "functions": functions, "gaps_ns": state["gaps"]}


def main(paths):
    result = [time_file(p) for p in paths]
    if errors:
        sys.exit("\n".join(errors[:10]))
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
