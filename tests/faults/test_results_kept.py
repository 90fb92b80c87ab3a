"""Once load has started, results are never lost: a lost target, a failing step, an unusable --out."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from datetime import datetime

import pytest
from helpers import ROOT, SHORT, LoadWatch, run_info, series_of, tables

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.bounds.run_span import target_lost
from loadtest.exit_codes import UsageError
from loadtest.findings.assess import assess, exit_code
from loadtest.outputs import check_out, write_text
from loadtest.results.form import AccountRow, FindingKind, Results
from loadtest.service.error_codes import CONNECTION_ERROR


def second(t: int, requests: int, unanswered: int = 0, other: int = 0) -> dict:
    errors = {CONNECTION_ERROR: unanswered} if unanswered else {}
    if other:
        errors["ResourceNotFound"] = other
    return {"t": t, "partition": "hot", "op_class": "GET", "requests": requests, "errors": errors}


def results_with(timeseries: list[dict]) -> Results:
    account = AccountRow(entities=0, mean_eps=0, peak_eps=0, target=20000, ratio=0)
    return Results(run=run_info(), partitions=[], account=account, timeseries=timeseries)


def test_a_run_that_ends_unanswered_lost_its_target_at_the_first_such_second():
    alive = [second(t, 100) for t in range(5)]
    lost = [second(5, 60, unanswered=60), second(6, 0), second(7, 80, unanswered=80), second(8, 90, unanswered=90)]
    assert target_lost(results_with(alive + lost)) == (5, 230)
    # answered errors are the service speaking: not lost; nor one unanswered second at the very end
    assert target_lost(results_with(alive + [second(5, 50, other=50), second(6, 50, other=50)])) is None
    assert target_lost(results_with(alive + [second(5, 50, unanswered=50)])) is None
    assert target_lost(results_with(alive + [second(5, 50, unanswered=50), second(6, 50, unanswered=49)])) is None
    assert target_lost(results_with(alive)) is None
    # seconds that completed nothing between the last answer and the first refusal (rows or none) held operations
    # in flight, a client retrying a refused connection: lost from the second after the last answer
    refused = [second(7, 80, unanswered=80), second(8, 90, unanswered=90)]
    assert target_lost(results_with(alive + [second(5, 0)] + refused)) == (5, 170)
    assert target_lost(results_with(alive + refused)) == (5, 170)


def test_a_lost_target_or_a_missing_step_fails_the_run_whatever_fail_on_says():
    results = assess(results_with([second(0, 10), second(1, 10, unanswered=10), second(2, 10, unanswered=10)]))
    assert [f.kind for f in results.findings] == [FindingKind.TARGET_LOST]
    assert "stopped answering at 1 s" in results.findings[0].message
    assert exit_code(results, [])[0] == 1
    results = results_with([second(0, 10)])
    results.incomplete.append({"step": "report.html", "error": "OSError: disk full", "at_s": 12.0})
    assess(results)
    assert [f.kind for f in results.findings] == [FindingKind.INCOMPLETE]
    assert exit_code(results, [])[0] == 1
    assert Results.from_json(results.to_json()).incomplete == results.incomplete


def test_out_must_be_a_writable_folder_without_an_earlier_run(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(UsageError, match="must be a folder, and it is a file"):
        check_out(str(a_file))
    with pytest.raises(UsageError, match="cannot be created"):
        check_out(str(a_file / "below"))
    with pytest.raises(UsageError, match="this user can create and write to"):
        check_out("/proc/partition-stress")
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "results.json").write_text("{}")
    with pytest.raises(UsageError, match="holds an earlier run .* --overwrite"):
        check_out(str(earlier))
    assert check_out(str(earlier), overwrite=True) == earlier
    assert check_out(str(tmp_path / "new" / "folder")).is_dir()


def test_a_file_is_written_whole_or_not_at_all(tmp_path):
    (tmp_path / "report.html").mkdir()  # something that cannot be replaced by a file
    with pytest.raises(OSError):
        write_text(tmp_path / "report.html", "x" * 100_000)
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left behind
    assert write_text(tmp_path / "results.json", "{}").read_text() == "{}"


@pytest.mark.parametrize(
    "make,rule",
    [
        (lambda p: (p / "f").write_text("x") and p / "f", "must be a folder, and it is a file"),
        (lambda p: (p / "results.json").write_text("{}") and p, "holds an earlier run"),
        (lambda p: "/proc/partition-stress", "this user can create and write to"),
    ],
)
def test_an_unusable_out_is_refused_before_anything_is_sent(loadtest, azurite, target, tmp_path, make, rule):
    before = tables(target)
    done = loadtest("run", *SHORT, "--out", str(make(tmp_path)), "--connection-string", azurite.connection_string)
    assert done.code == 2, done.output
    assert rule in done.stderr and "--out" in done.stderr
    assert "Traceback" not in done.output and len(done.stderr.strip().splitlines()) == 1
    assert tables(target) == before


def run_with_azurite(
    out, *, duration: str, kill_at: float, restart_at: float | None = None, answered_for: float = 3.0
) -> tuple[int, str, float]:
    """``loadtest run`` against an Azurite of its own, killed (SIGKILL, as a crash) ``kill_at`` s after its load
    started: the exit code, the output and when it was dead (epoch seconds). Timed from Locust's "Ramping to" line,
    not from the command: a busy machine once took over 3 s to start it, and Azurite died during set-up (nothing
    measured). Restarted on its port at ``restart_at``, the run is
    stopped by SIGINT ``answered_for`` s after Azurite answers again (``duration`` is only a bound then): a busy
    machine once took Azurite past a fixed run's end to restart, and no second was answered without the table."""
    with EmbeddedAzurite() as azurite:
        child = subprocess.Popen(
            [sys.executable, "-m", "loadtest", "run", "-t", duration, "-u", "4", "-r", "4", "--rate", "25"]
            + ["--seed-entities", "100"]
            + ["--mix", "read=60,upsert=40", "--out", str(out), "--connection-string", azurite.connection_string],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        watch = LoadWatch(child.stdout)
        try:
            watch.wait_started()
            time.sleep(kill_at)
            azurite.process.kill()
            azurite.process.wait(timeout=10)
            killed = time.time()
            azurite.stop()  # its pipe closed; the port is free to restart on
            if restart_at is not None:
                time.sleep(restart_at - kill_at)
                azurite.start()  # the same port, in memory: the test table is gone; returns once it answers
                time.sleep(answered_for)
                child.send_signal(signal.SIGINT)
            child.wait(timeout=120)
            watch.join()
        finally:
            if child.poll() is None:
                child.kill()
    return child.returncode, watch.text(), killed


def test_a_target_killed_mid_run_keeps_the_results_and_names_the_loss(tmp_path):
    """Azurite killed 3 s into a 6-s run's load, never restarted: its last seconds (2 make TARGET_LOST) all refused,
    from the second after the one it died in (the run's seconds count from its start, results.json's second)."""
    out = tmp_path / "out"
    code, output, killed = run_with_azurite(out, duration="6s", kill_at=3)
    assert code == 1, output
    assert "Traceback" not in output
    data = json.loads((out / "results.json").read_text())
    assert (out / "report.html").is_file() and (out / "timeseries.csv").is_file()
    kinds = {f["kind"]: f["message"] for f in data["findings"]}
    assert "TARGET_LOST" in kinds and "stopped answering" in kinds["TARGET_LOST"]
    lost = int(re.search(r"answering at (\d+) s", kinds["TARGET_LOST"]).group(1))
    died = int(killed) - int(datetime.fromisoformat(data["run"]["started"]).timestamp())
    assert 1 <= lost and died <= lost <= died + 1, (lost, died)  # a fixed bound once failed a busy machine's later start
    assert "read-back" in kinds.get("INCOMPLETE", "")  # the table could not be read back: said, not hidden
    assert data["errors"].get(CONNECTION_ERROR, 0) > 0
    assert sum(r["requests"] for r in data["partitions"] if r["op_class"] != "ALL") > data["errors"][CONNECTION_ERROR]
    assert "TARGET_LOST" in (out / "report.html").read_text()


def test_a_target_restarted_mid_run_without_the_table_says_the_table_vanished(tmp_path):
    """Azurite killed 3 s into a run's load and restarted on its port at 5 s: in memory, the test table is gone."""
    out = tmp_path / "out"
    code, output, _ = run_with_azurite(out, duration="60s", kill_at=3, restart_at=5)
    assert code == 1, output
    assert "Traceback" not in output
    data, series = json.loads((out / "results.json").read_text()), series_of(out)
    assert (out / "report.html").is_file()
    assert data["errors"].get(CONNECTION_ERROR, 0) > 0 and data["errors"].get("TableNotFound", 0) > 0
    lost = max(row["t"] for row in series if row["errors"].get(CONNECTION_ERROR))
    late = [row for row in series if row["t"] > lost]  # answered again, without the table
    assert late and all(set(row["errors"]) <= {"TableNotFound"} for row in late), series
    assert sum(row["errors"].get("TableNotFound", 0) for row in late) > 0
    findings = {f["kind"]: f for f in data["findings"]}
    assert "TARGET_LOST" not in findings  # it answers again: the run ends answered
    assert "TableNotFound: the test table was gone" in " ".join(f["remedy"] for f in data["findings"] if f["kind"] == "ERRORS")
    assert "read-back" in findings["INCOMPLETE"]["message"]  # the table to read back is gone: said, and exit 1
