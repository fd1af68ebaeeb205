"""Reference figures for a DUMPI trace from the official reader (PyPI pydumpi==0.1.3, which wraps
sst-dumpi's libundumpi).

Usage: python3 dumpi_reference.py FILE.bin [FILE.bin ...]

Prints one JSON object: for each file (in the order given) the number of records per MPI
function, and the bytes sent per (communicator handle, destination as recorded) by
Send/Bsend/Ssend/Rsend/Isend/Ibsend/Issend/Irsend and the send half of Sendrecv, computed as
count x the file's datatype size.

Callbacks are installed directly on libundumpi's callback table: pydumpi's own wrappers are
missing the argument structures of a few calls (MPI_Iprobe, the MPIO_ request calls) and would
drop those records.
"""
import contextlib
import json
import os
import sys
from ctypes import POINTER, cast

from pydumpi import DumpiTrace
from pydumpi.callbacks import CALLBACK, DumpiCallbacks
from pydumpi import dtypes

SENDS = {"send": "DumpiSend", "bsend": "DumpiBSend", "ssend": "DumpiSSend", "rsend": "DumpiRSend",
         "isend": "DumpiISend", "ibsend": "DumpiIbSend", "issend": "DumpiIsSend", "irsend": "DumpiIrSend"}


errors = []


def count_file(path):
    calls = {}
    sent = {}
    trace = DumpiTrace(path)
    keep = []

    def add(comm, dest, nbytes):
        key = f"{comm}:{dest}"
        sent[key] = sent.get(key, 0) + nbytes

    def make(field):
        short = field[3:]
        name = "MPI_" + short[0].upper() + short[1:]

        def callback(data, thread, cpu, wall, perf, userarg):
            # ctypes ignores exceptions raised in callbacks: record them and fail at the end.
            try:
                calls[name] = calls.get(name, 0) + 1
                sizes = trace.type_sizes
                if short in SENDS:
                    d = cast(data, POINTER(getattr(dtypes, SENDS[short]))).contents
                    add(d.comm, d.dest, d.count * sizes[d.datatype])
                elif short == "sendrecv":
                    d = cast(data, POINTER(dtypes.DumpiSendrecv)).contents
                    add(d.comm, d.dest, d.sendcount * sizes[d.sendtype])
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
    return {"file": os.path.basename(path), "calls": calls, "sent": sent}


def main(paths):
    result = [count_file(p) for p in paths]
    if errors:
        sys.exit("\n".join(errors[:10]))
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
