"""The Python package against the CLI: every report the package returns must equal what
`tracelogic <subcommand> --json` prints for the same trace (timing fields aside).

The CLI is target/debug/tracelogic (`cargo build -p tracelogic`), or $TRACELOGIC_CLI.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

import tracelogic

ROOT = Path(__file__).resolve().parents[3]
CLI = Path(os.environ.get("TRACELOGIC_CLI", ROOT / "target" / "debug" / "tracelogic"))
SAMPLES = [
    ROOT / "tests" / "data" / "samples" / "npb-lu.S.8",  # DUMPI, NAS LU class S on 8 ranks
    ROOT / "tests" / "data" / "apps" / "lammps-melt-8",  # DUMPI, LAMMPS melt on 8 ranks
]
IDS = [p.name for p in SAMPLES]


def cli_json(*args):
    if not CLI.exists():
        pytest.fail(f"{CLI} missing: run `cargo build -p tracelogic` first")
    out = subprocess.run([str(CLI), *map(str, args), "--json"], capture_output=True, text=True)
    assert out.stdout, f"tracelogic {' '.join(map(str, args))} printed nothing: {out.stderr}"
    return json.loads(out.stdout)


def untimed(value):
    """`value` without the fields that time the run (they differ between any two runs)."""
    if isinstance(value, dict):
        return {
            k: untimed(v)
            for k, v in value.items()
            if k not in ("ms", "milliseconds", "timings") and not k.endswith("_ms")
        }
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


@pytest.fixture(scope="module", params=SAMPLES, ids=IDS)
def sample(request):
    return request.param, tracelogic.read(request.param)


def test_summary_equals_the_cli(sample):
    path, trace = sample
    assert trace.summary() == cli_json("summary", path)


def test_topology_equals_the_cli(sample):
    path, trace = sample
    assert untimed(trace.topology()) == untimed(cli_json("topology", path))


def test_logical_equals_the_cli(sample):
    path, trace = sample
    assert untimed(trace.logical()) == untimed(cli_json("logical", path))


def test_compressed_logical_equals_the_cli(sample):
    path, trace = sample
    assert untimed(trace.logical(compress=True)) == untimed(cli_json("logical", path, "--compress"))


def test_matrix_equals_the_cli(sample):
    path, trace = sample
    assert trace.matrix() == cli_json("matrix", path)
    assert trace.matrix("messages", 20.0) == cli_json("matrix", path, "--metric", "messages", "--threshold", "20")


def test_patterns_equal_the_cli(sample):
    path, trace = sample
    assert untimed(trace.patterns()) == untimed(cli_json("patterns", path))


def test_phases_equal_the_cli(sample):
    path, trace = sample
    assert untimed(trace.phases()) == untimed(cli_json("phases", path))


def test_calls_have_one_row_per_call(sample):
    path, trace = sample
    summary = trace.summary()
    calls = trace.calls
    # Pipit's required columns (pipit Trace.__init__), and the ones its match_events and
    # calc_inc_metrics add to Enter rows.
    pipit = ["Timestamp (ns)", "Event Type", "Name", "Process", "_matching_timestamp", "time.inc"]
    assert list(calls.keys())[: len(pipit)] == pipit
    assert set(calls["Event Type"]) == {"Enter"}
    assert all(b - a == d for a, b, d in zip(calls["Timestamp (ns)"], calls["_matching_timestamp"], calls["time.inc"]))
    # The last exit is the end of the run the summary gives (times from the first event).
    assert max(calls["_matching_timestamp"]) <= summary["end_ns"] - summary["start_ns"]
    assert len(calls["Name"]) == summary["calls"]
    # Per rank and per function, the counts the summary gives.
    ranks = list(calls["Process"])
    assert [ranks.count(r) for r in range(summary["ranks"])] == summary["calls_per_rank"]
    names = list(calls["Name"])
    assert {n: names.count(n) for n in set(names)} == summary["calls_by_kind"]


def test_messages_match_the_summary_and_the_query(sample):
    path, trace = sample
    summary = trace.summary()
    messages = trace.messages
    assert list(messages.keys())[:3] == ["sender", "receiver", "bytes"]
    query = cli_json("query", path, "--limit", "5")
    assert len(messages["sender"]) == query["messages_selected"]
    # The first rows are the ones `tracelogic query` lists, field for field.
    for i, row in enumerate(query["messages"]):
        assert {k: messages[k][i] for k in row} == row
    assert sum(messages["bytes"]) <= summary["p2p_bytes"]


def test_pandas_frames_when_pandas_is_installed(sample):
    pandas = pytest.importorskip("pandas")
    _, trace = sample
    assert isinstance(trace.calls, pandas.DataFrame)
    assert isinstance(trace.messages, pandas.DataFrame)
    calls = trace.calls
    # Within a rank, calls follow one another: each enters no earlier than the previous one left.
    for _, rank in calls.groupby("Process"):
        assert (rank["Timestamp (ns)"].iloc[1:].values >= rank["_matching_timestamp"].iloc[:-1].values).all()


def test_a_list_of_files_is_one_trace():
    path = SAMPLES[0]
    files = sorted(p for p in path.iterdir() if p.is_file())
    assert tracelogic.read(files).summary() == tracelogic.read(path).summary()


def test_bytes_are_read_like_files():
    path = SAMPLES[0]
    files = {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}
    assert tracelogic.read_bytes(files).summary()["calls"] == tracelogic.read(path).summary()["calls"]


def test_a_missing_file_raises_value_error_naming_it(tmp_path):
    missing = tmp_path / "no-such-trace.otf2"
    with pytest.raises(ValueError, match="no-such-trace.otf2"):
        tracelogic.read(missing)


def test_a_broken_file_raises_value_error_naming_it(tmp_path):
    broken = tmp_path / "broken-0000.bin"
    broken.write_bytes(b"\x00\x01garbage that is no trace")
    with pytest.raises(ValueError) as e:
        tracelogic.read(broken)
    assert "broken-0000.bin" in str(e.value)


def test_bad_options_raise_value_error():
    trace = tracelogic.read(SAMPLES[0])
    with pytest.raises(ValueError):
        trace.phases(strength=float("nan"))
    with pytest.raises(ValueError):
        trace.matrix(metric="furlongs")
    with pytest.raises(ValueError):
        trace.matrix(threshold_pct=-1.0)


NOTEBOOK = ROOT / "examples" / "tracelogic.ipynb"


def test_the_example_notebook_is_valid_and_runs():
    """Valid nbformat 4; executed cell by cell when nbclient is installed (`pip install nbclient
    ipykernel`), so its walk through topology, logical trace and phases stays current."""
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    for call in ("tracelogic.read(", ".topology()", ".logical(", ".phases()"):
        assert call in code
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.reads(NOTEBOOK.read_text(), as_version=4))
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.reads(NOTEBOOK.read_text(), as_version=4)
    nbclient.NotebookClient(notebook, timeout=120, resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    printed = "".join(
        o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    # The sample is NAS LU on 8 ranks: the 4x2 grid it decomposes its domain into.
    assert "identified: 4x2 grid" in printed
    assert "ValueError: cannot read no-such-trace.otf2" in printed


def test_calls_are_pipits_enter_rows_of_pipits_own_csv():
    """Pipit's CSV of its ping-pong sample is Pipit's `events` table as Pipit wrote it: its MPI
    Enter rows, with the Leave that follows each (MPI calls do not nest), must be the rows of
    `calls`, same names, processes, entries and exits (one clock offset, the first event)."""
    path = ROOT / "tests" / "data" / "samples" / "pipit-csv" / "ping-pong-csv.csv"
    import csv

    with open(path, newline="") as f:
        events = [r for r in csv.DictReader(f) if r["Name"].startswith("MPI_")]
    expected, open_calls = [], {}
    for r in events:
        key = (int(r["Process"]), r["Name"])
        if r["Event Type"] == "Enter":
            open_calls[key] = float(r["Timestamp (ns)"])
        elif r["Event Type"] == "Leave":
            expected.append((key[0], key[1], open_calls.pop(key), float(r["Timestamp (ns)"])))
    expected.sort(key=lambda e: (e[0], e[2]))
    calls = tracelogic.read(path).calls
    got = list(zip(calls["Process"], calls["Name"], calls["Timestamp (ns)"], calls["_matching_timestamp"]))
    assert len(got) == len(expected) == 40
    offset = got[0][2] - expected[0][2]
    for (p, n, t0, t1), (ep, en, e0, e1) in zip(got, expected):
        assert (p, n) == (ep, en)
        assert abs(t0 - e0 - offset) <= 1 and abs(t1 - e1 - offset) <= 1
