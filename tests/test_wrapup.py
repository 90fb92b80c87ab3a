"""After the load, in this process: every output written on its own, and a step that fails is an INCOMPLETE
finding saying what is missing, never a lost result."""

from __future__ import annotations

import time

from helpers import results_of, run_info
from synthetic import recorded

from loadtest.exit_codes import EXIT_RUN_FAILED
from loadtest.findings.assess import assess, exit_code
from loadtest.findings.order import weight
from loadtest.integrity import Ledger, verify
from loadtest.service_errors import ServiceError
from loadtest.summary import build
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
    lines = console_lines(results, shown=6)
    assert lines[0].split()[:3] == ["HOT", "the", "account"], lines
    throttled = [line for line in lines if line.split()[0] == "THROTTLED"]
    assert len(throttled) == 5 and len({line.split("'")[1] for line in throttled}) == 5  # one line a partition
    assert "partition 'p0': 48 attempts were throttled (GET 24, PUT 24)" in throttled[0]
    # 20 entities/s against a 2,000/s target cannot explain it: the account's total at those seconds does
    assert "its own load does not explain it" in throttled[0] and "the account's total reached 160 entities/s" in throttled[0]
    every = console_lines(results, shown=10**6)
    assert len(every) == len(results.findings) and lines[-1] == f"  … and {len(every) - 6} more findings in the report"


def test_the_console_lists_the_findings_in_the_one_order_results_json_and_the_report_keep():
    results = many_throttled(partitions=2)
    lines = console_lines(results, shown=10**6)
    assert lines == [f"  {f.kind:<15} {f.message}" for f in results.findings]
    weights = [weight(f) for f in results.findings]
    assert weights == sorted(weights)
