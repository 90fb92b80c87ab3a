"""After the load, in this process: every output written on its own, and a step that fails is an INCOMPLETE
finding saying what is missing, never a lost result."""

from __future__ import annotations

import errno
import json
import math
import os
import time

import pytest
from helpers import in_process, results_of, run_info
from synthetic import recorded
from test_results import engine_results

from loadtest import wrapup
from loadtest.counting import bucket_frame
from loadtest.exit_codes import EXIT_RUN_FAILED
from loadtest.findings import assess as assess_module
from loadtest.findings.assess import DETECTORS, assess, exit_code
from loadtest.findings.levels import levels
from loadtest.findings.order import weight
from loadtest.outputs import REPORT_FILE, SERVER_LOGS_FILE
from loadtest.report import server_logs as serverlogs
from loadtest.report.headline import verdict_sentences
from loadtest.results import form as results_module
from loadtest.results import series_frame
from loadtest.results.form import Results
from loadtest.results.summary import build
from loadtest.service.error_codes import ServiceError
from loadtest.testbed.integrity import Ledger, verify
from loadtest.wrapup import console_lines, finish


def measured():
    seconds = {t: [{"op": "read", "entities": 5}, {"op": "upsert", "op_class": "PUT", "entities": 1}] for t in range(6)}
    return build(recorded(seconds, steady_from=1), run_info())


def test_every_output_is_written_and_the_read_back_lands_in_the_results(target, table, tmp_path):
    results = measured()
    read_back = lambda: verify(Ledger(), table.keys())  # noqa: E731  (the real read-back of an empty table)
    assert finish(results, tmp_path, target=target, started=time.time(), read_back=read_back)
    for name in ("results.json", "timeseries.csv", "report.html", "server-logs.kql"):
        assert (tmp_path / name).is_file(), name
    integrity = results_of(tmp_path)["integrity"]
    assert integrity["checked"] is True and integrity["lost"] == 0 and results.incomplete == []
    assert exit_code(results, [])[0] == 0


def test_without_the_report_every_other_output_lands_and_loadtest_report_draws_it_later(target, tmp_path, monkeypatch):
    """--no-report (CI reads results.json and --junit): the run's folder whole but report.html, which ``loadtest
    report`` draws from it when someone wants to look."""
    results = measured()
    assert finish(results, tmp_path, target=target, started=time.time(), report=False)
    assert not (tmp_path / REPORT_FILE).exists()
    for name in ("results.json", "timeseries.csv", "series.parquet", SERVER_LOGS_FILE):
        assert (tmp_path / name).is_file(), name
    assert results.incomplete == [] and exit_code(results, [])[0] == 0
    assert wrapup.written_line(tmp_path, False) == f"Results: {tmp_path / 'results.json'} (--no-report)"
    code, stdout, stderr = in_process(monkeypatch, "report", str(tmp_path))
    assert code == 0 and stdout.strip() == str(tmp_path / REPORT_FILE), stderr
    assert "Partitions" in (tmp_path / REPORT_FILE).read_text()


def test_a_report_that_cannot_be_written_leaves_the_results_and_says_so(target, tmp_path):
    (tmp_path / "report.html").mkdir()  # in the way
    results = measured()
    assert finish(results, tmp_path, target=target, started=time.time())
    data = results_of(tmp_path)
    incomplete = [f for f in data["findings"] if f["kind"] == "INCOMPLETE"]
    assert incomplete and "report.html failed" in incomplete[0]["message"]
    assert sum(r["requests"] for r in data["partitions"]) > 0 and (tmp_path / "server-logs.kql").is_file()
    assert exit_code(results, [])[0] == EXIT_RUN_FAILED


def test_a_read_back_against_a_target_gone_is_explained_and_the_rest_is_written(target, tmp_path):
    def gone() -> dict:
        raise ServiceError("TableNotFound", 404)

    results = measured()
    assert finish(results, tmp_path, target=target, started=time.time() - 3, read_back=gone)
    (step,) = results.incomplete
    assert step["step"] == "the read-back of acknowledged writes" and "404 TableNotFound" in step["error"]
    assert step["at_s"] >= 3
    assert "read-back" in " ".join(f["message"] for f in results_of(tmp_path)["findings"] if f["kind"] == "INCOMPLETE")
    assert (tmp_path / "report.html").is_file()


def test_results_that_cannot_be_written_at_all_are_said_so(target, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert not finish(measured(), blocked, target=target, started=time.time())
    assert blocked.read_text() == "not a folder"


def many_throttled(partitions: int = 8):
    """Each partition read and written at 10 entities/s, both op classes throttled; the account over its target."""
    seconds = {
        t: [
            {"partition": f"p{i}", "op": op, "op_class": op_class, "entities": 10, "throttled": 2, "attempts": 3}
            for i in range(partitions)
            for op, op_class in (("read", "GET"), ("insert", "PUT"))
        ]
        for t in range(12)
    }
    return assess(build(recorded(seconds), run_info(account_target=50)))


def test_the_console_lists_the_heaviest_findings_first_one_throttled_line_a_partition_and_counts_the_rest():
    """The issue: the account over its limit was line 16 of 48, under a THROTTLED line per partition and op class."""
    results = many_throttled()
    kinds = [f.kind for f in results.findings]
    assert kinds.count("THROTTLED") == 8 and kinds[0] == "HOT"  # one THROTTLED a partition, GET and PUT its parts
    verdict, *lines = console_lines(results, shown=6)
    assert verdict == verdict_sentences(results)[0] and lines[0].split()[:3] == ["HOT", "the", "account"], lines
    throttled = [line for line in lines if line.split()[0] == "THROTTLED"]
    assert len(throttled) == 5 and len({line.split("'")[1] for line in throttled}) == 5  # one line a partition
    assert "partition 'p0': 48 attempts were throttled (GET 24, PUT 24)" in throttled[0]
    # 20 entities/s against a 2,000/s target cannot explain it: the account's total at those seconds does
    assert "its own load does not explain it" in throttled[0] and "the account's total reached 160 entities/s" in throttled[0]
    every = console_lines(results, shown=10**6)[1:]
    assert len(every) == len(results.findings) and lines[-1] == f"  … and {len(every) - 6} more findings in the report"


def test_the_console_lists_the_findings_in_the_one_order_results_json_and_the_report_keep():
    results = many_throttled(partitions=2)
    lines = console_lines(results, shown=10**6)[1:]  # after the report's first sentence
    assert lines == [f"  {f.kind:<15} {f.message}" for f in results.findings]
    weights = [weight(f) for f in results.findings]
    assert weights == sorted(weights)


def strict_results(out) -> Results:
    """results.json as a strict parser reads it (no NaN or Infinity), and as ``loadtest report`` loads it."""

    def refuse(token: str) -> None:
        raise AssertionError(f"results.json holds {token}, which strict JSON parsers refuse")

    json.loads((out / "results.json").read_text(), parse_constant=refuse)
    return Results.load_file(out / "results.json")


def fail(*_args, **_kwargs):
    raise TypeError("injected")


WRITERS = {
    "series.parquet": (series_frame, "write"),
    "buckets.parquet": (bucket_frame, "write"),
    "timeseries.csv": (series_frame, "write_csv"),
    "server-logs.kql": (serverlogs, "write"),
    "report.html": (wrapup, "_render"),
}


@pytest.mark.parametrize("step", [*WRITERS, "upload"])
def test_a_writer_that_raises_anything_costs_only_itself_and_results_json_lands_valid(step, tmp_path, monkeypatch):
    """The issue: a writer raising anything but OSError (ArrowInvalid, TypeError) lost every figure."""
    monkeypatch.setattr(wrapup, "_render", lambda results, out: (out / REPORT_FILE).write_text("drawn"))
    if step in WRITERS:
        monkeypatch.setattr(*WRITERS[step], fail)
    # the page drawn as a stand-in (the real one: test_a_report_that_cannot_be_written…); the queries as patched
    outputs = ((SERVER_LOGS_FILE, serverlogs.write), (REPORT_FILE, lambda results, out: wrapup._render(results, out)))
    results = engine_results("e1")
    upload = ("the upload to the blob container", fail) if step == "upload" else None
    assert finish(results, tmp_path, target=None, started=time.time(), outputs=outputs, upload=upload)
    read = strict_results(tmp_path)
    assert [s["step"] for s in read.incomplete] == [step if step in WRITERS else upload[0]]
    assert read.incomplete[0]["error"] == "TypeError: injected"
    assert sum(r.requests for r in read.partitions) == sum(r.requests for r in results.partitions) > 0
    assert len(read.timeseries) == len(results.timeseries) > 0  # the series: in its file, or in results.json's rows
    incomplete = [f.message for f in read.findings if f.kind == "INCOMPLETE"]
    assert len(incomplete) == 1 and incomplete[0].startswith(f"{read.incomplete[0]['step']} failed at ")
    assert exit_code(read, [])[0] == EXIT_RUN_FAILED


@pytest.mark.parametrize("detector", DETECTORS[:-1], ids=lambda d: d.__module__.rsplit(".", 1)[-1])
def test_a_detector_that_raises_costs_only_its_findings(detector, tmp_path, monkeypatch):
    """The issue: ``assess()`` raising lost the run's figures; now the other detectors' findings stand beside an
    INCOMPLETE naming the one that failed."""
    index = DETECTORS.index(detector)
    monkeypatch.setattr(assess_module, "DETECTORS", (*DETECTORS[:index], fail, *DETECTORS[index + 1 :]))
    fail.__module__ = detector.__module__
    try:
        assert finish(measured(), tmp_path, target=None, started=time.time(), outputs=())
    finally:
        fail.__module__ = __name__
    read = strict_results(tmp_path)
    step = f"the findings of {detector.__module__.removeprefix('loadtest.')}"
    assert [(s["step"], s["error"]) for s in read.incomplete] == [(step, "TypeError: injected")]
    kinds = {f.kind for f in read.findings}
    assert "INCOMPLETE" in kinds and (detector is levels or "COOL" in kinds)


def test_a_figure_that_is_not_a_number_is_written_as_null_in_strict_json_and_named(tmp_path):
    """The issue: ``json.dumps`` wrote NaN, which ``report`` and ``merge`` (and other parsers) then refused."""
    results = measured()
    results.retry = {"backoff_s": math.nan, "attempts_per_operation": math.inf}
    assert finish(results, tmp_path, target=None, started=time.time(), outputs=())
    text = (tmp_path / "results.json").read_text()
    data = json.loads(text, parse_constant=lambda token: pytest.fail(f"results.json holds {token}"))
    assert data["retry"] == {"backoff_s": None, "attempts_per_operation": None}
    (step,) = data["incomplete"]
    assert step["step"] == "results.json's figures"
    assert "results.retry.backoff_s: nan" in step["error"] and "results.retry.attempts_per_operation: inf" in step["error"]
    assert any(f["kind"] == "INCOMPLETE" and "not a number" in f["message"] for f in data["findings"])


def test_a_series_that_cannot_be_written_to_parquet_goes_inside_results_json(tmp_path, monkeypatch):
    monkeypatch.setattr(series_frame, "write", fail)
    results = measured()
    assert finish(results, tmp_path, target=None, started=time.time(), outputs=())
    assert not (tmp_path / "series.parquet").exists()
    data = json.loads((tmp_path / "results.json").read_text())
    assert "series" not in data and len(data["timeseries"]) == len(results.timeseries)
    assert Results.load_file(tmp_path / "results.json").timeseries["entities"].sum() == results.timeseries["entities"].sum()


def test_a_full_disk_says_in_one_line_where_the_results_could_not_be_written(tmp_path, monkeypatch, caplog):
    def full(path, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(results_module, "write_text", full)
    assert not finish(measured(), tmp_path, target=None, started=time.time(), outputs=())
    (line,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert line == f"the results could not be written to {tmp_path / 'results.json'}: No space left on device"


def test_the_console_opens_with_the_reports_first_sentence_and_a_hot_partition_is_followed_by_the_advise_line():
    """Issue #64: the console printed the findings without the verdict the report opens with, and HOT's "ask advise"
    line only in the files."""
    from loadtest.findings.levels import advise_line

    results = assess(build(recorded({t: [{"entities": 300}] for t in range(12)}), run_info(partition_target=100)))
    lines = console_lines(results)
    assert lines[0] == verdict_sentences(results)[0] and "HOT" in lines[0]
    hot = next(i for i, line in enumerate(lines) if line.split()[:1] == ["HOT"])
    ask = advise_line(results).strip()
    assert ask.startswith("Ask for the design that fits") and lines[hot + 1].strip() == ask
    assert sum(ask in line for line in lines) == 1
