"""``loadtest merge`` with its engines read in worker processes: the same run as merged in one process, the same one
line for an engine it refuses, and a worker that dies named, not waited for."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import zlib

from hdrh.histogram import HdrHistogram
from helpers import ROOT, in_process
from test_engines import engine, load

from loadtest.engines import merge_command as command
from loadtest.engines.merge import APART_FROM, merge_workers


def merged_with(monkeypatch, workers: int, *args: str) -> tuple[int | str, str, str]:
    monkeypatch.setattr(command, "merge_workers", lambda engines: workers)
    return in_process(monkeypatch, "merge", *args)


def test_the_workers_are_one_a_core_from_enough_engines_on():
    assert merge_workers(APART_FROM - 1) == 0
    assert merge_workers(APART_FROM) == min(len(os.sched_getaffinity(0)), 4)


def test_engines_merged_in_workers_are_the_run_merged_in_one_process(tmp_path, monkeypatch):
    """Nine engines of different loads, latencies and starts (one written before buckets.parquet, its buckets listed
    in results.json): every output of the merge in two workers is byte for byte the one process's."""
    for i in range(9):
        seconds = {t: events + load(2 + i, partition=f"k{(i + t) % 4}", op_class="PUT", ms=3.0 + i)[t] for t, events in
                   load(10 + i, partition=f"k{i % 3}", ms=1.0 + i).items()}  # fmt: skip
        results = engine(f"e{i}", seconds, start=1_000_000.0 + i % 3)
        if i == 4:
            (tmp_path / f"e{i}").mkdir()
            (tmp_path / f"e{i}" / "results.json").write_text(json.dumps(results.to_dict()))
        else:
            results.write(tmp_path / f"e{i}")
    monkeypatch.chdir(tmp_path)
    engines = [f"e{i}" for i in range(9)]
    for workers, out in ((0, "one"), (2, "apart")):
        code, _, err = merged_with(monkeypatch, workers, *engines, "--out", out)
        assert code == 0, err
    for name in ("results.json", "series.parquet", "timeseries.csv", "report.html"):
        assert (tmp_path / "apart" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    merged = json.loads((tmp_path / "apart" / "results.json").read_text())
    assert [e["engine"] for e in merged["engines"]] == engines
    assert merged["account"]["entities"] == sum(6 * (10 + i) + 6 * (2 + i) for i in range(9))


def past_the_hour() -> str:
    """A histogram whose header says an hour but whose counts run past it: refused only as its counts are added."""
    wide = HdrHistogram(1, 10**12, 2)
    wide.record_value(10**11)
    raw = base64.b64decode(wide.encode())
    payload = bytearray(zlib.decompress(raw[8:]))
    struct.pack_into(">Q", payload, 24, 3_600_000_000)
    packed = zlib.compress(bytes(payload))
    return base64.b64encode(raw[:4] + struct.pack(">I", len(packed)) + packed).decode("ascii")


def run_id(data: dict) -> None:
    data["run"]["id"] = "r2"


def undecodable(data: dict) -> None:
    data["mergeable"]["metrics"]["latency"][0][2] = past_the_hour()


def not_a_histogram(data: dict) -> None:
    data["mergeable"]["metrics"]["latency"][0][2] = "AAAA"


def no_run(data: dict) -> None:
    data.pop("run")


#: What differs in the second of three engines, and where, and the line that refuses it.
REFUSED = {
    "a run id apart": (run_id, "results.json", "different run ids: 'r1' (e0) and 'r2' (e1)"),
    "not results": (no_run, "results.json", "e1: not a partition-stress results.json"),
    "counts that do not decode": (undecodable, "results.json", "e1: not a partition-stress results.json: results.mergea"),
    "not a histogram": (not_a_histogram, "results.json", "metrics.latency[0][2]: an HDR histogram"),
    "buckets cut short": (lambda path: path.write_bytes(path.read_bytes()[:-100]), "buckets.parquet", "e1: buckets.parquet"),
}


def test_an_engine_refused_in_a_worker_is_the_one_line_of_one_process(tmp_path, monkeypatch):
    for case, (change, file, said) in REFUSED.items():
        folder = tmp_path / case.replace(" ", "-")
        for i in range(3):
            engine(f"e{i}", load(3, seconds=3)).write(folder / f"e{i}")
        path = folder / "e1" / file
        if file == "results.json":
            data = json.loads(path.read_text())
            change(data)
            path.write_text(json.dumps(data))
        else:
            change(path)
        monkeypatch.chdir(folder)
        lines = []
        for workers in (0, 2):
            code, _, err = merged_with(monkeypatch, workers, "e0", "e1", "e2", "--out", f"m{workers}")
            assert code == 2 and said in err and err.count("\n") == 1 and "Traceback" not in err, (case, workers, err)
            assert not (folder / f"m{workers}").exists()
            lines.append(err)
        assert lines[0] == lines[1], case


WORKER_DIES = """
from loadtest.engines.merge_workers import MergeWorkers
from loadtest.exit_codes import ToolError

try:
    with MergeWorkers(1) as pool:
        pool._workers[0].kill()
        next(pool.histograms())
except ToolError as err:
    print(err)
"""


def test_a_worker_that_dies_is_named_and_not_waited_for():
    """In a process of its own, as ``loadtest merge`` runs (this one's gevent, patched in for Locust, is not the
    merge's)."""
    done = subprocess.run([sys.executable, "-c", WORKER_DIES], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "its worker process merge-0 ended (exit -9) before it answered" in done.stdout, done.stdout + done.stderr
