"""Reference figures for a DUMPI trace from the official reader (PyPI pydumpi==0.1.3, which wraps
sst-dumpi's libundumpi).

Usage: python3 dumpi_reference.py FILE.bin [FILE.bin ...]

Prints one JSON object: for each file (in the order given) the number of records per MPI
function, and the bytes sent per (communicator handle, destination as recorded) by
Send/Bsend/Ssend/Rsend/Isend/Ibsend/Issend/Irsend and the send half of Sendrecv, computed as
count x the file's datatype size.
"""
import json
import os
import sys
import contextlib

from pydumpi import DumpiTrace

SENDS = {"send", "bsend", "ssend", "rsend", "isend", "ibsend", "issend", "irsend"}


class Counter(DumpiTrace):
    def __init__(self, path):
        self.calls = {}
        self.sent = {}
        super().__init__(path)

    def __getattr__(self, attr):
        # pydumpi registers a callback for every on_<function> attribute that exists.
        if not attr.startswith("on_") or attr.startswith("on_function_"):
            raise AttributeError(attr)
        short = attr[3:]
        name = "MPI_" + short[0].upper() + short[1:]

        def callback(data, thread, cpu, wall, perf):
            self.calls[name] = self.calls.get(name, 0) + 1
            if short in SENDS:
                self.add(data.comm, data.dest, data.count * self.type_sizes[data.datatype])
            elif short == "sendrecv":
                self.add(data.comm, data.dest, data.sendcount * self.type_sizes[data.sendtype])

        return callback

    def add(self, comm, dest, nbytes):
        key = f"{comm}:{dest}"
        self.sent[key] = self.sent.get(key, 0) + nbytes


def main(paths):
    out = []
    for path in paths:
        # libundumpi warns on stdout/stderr about newer trace versions; keep stdout pure JSON.
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
            with Counter(path) as trace:
                trace.read_stream()
        out.append({"file": os.path.basename(path), "calls": trace.calls, "sent": trace.sent})
    sys.stdout.flush()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
