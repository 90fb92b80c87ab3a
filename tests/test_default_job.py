"""The default job (`bash scripts/run.sh`: one PartitionKey asked for 400 operations/s of the default mix through the
throttling emulator at Azure's budgets), shortened, opened in Chromium: one straight answer (issue #51). The partition
is HOT on GET and PUT together and nothing contradicts it; the unserved demand is put down to the throttling that
refused it, with the design's remedy; the note names the throttling emulator and its budgets; the console and the
report list the findings in one order.

Alone: whether the generator sends the schedule whole (and the emulator throttles it) is this machine's pace."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from browser import chromium_page
from helpers import ROOT, run_loadtest
from test_junit import valid

from loadtest.finding_kinds import CHECKLIST, KINDS
from loadtest.findings.remedies import contradictions, keys_needed
from loadtest.results import Finding


def default_job_args() -> list[str]:
    """The default job's own arguments, as scripts/run.sh gives them when it is given none."""
    script = (ROOT / "scripts" / "run.sh").read_text()
    line = next(line for line in script.splitlines() if line.strip().startswith("set -- "))
    return shlex.split(line.strip())[2:]


@pytest.mark.alone
@pytest.mark.browser
def test_the_default_jobs_report_gives_one_straight_answer(tmp_path: Path, artifacts):
    args = default_job_args()
    assert args == ["--arrival-rate", "400", "--emulate-throttling"]
    junit_file = tmp_path / "junit.xml"  # as CI gates it: the verdict where CI looks
    gate = ("--fail-on", "hot", "--junit", str(junit_file))
    done = run_loadtest("run", *args, "-t", "10s", "--out", str(tmp_path), *gate, timeout=180)
    assert done.code == 3 and "FAILED --fail-on hot" in done.output, done.output
    results = json.loads((tmp_path / "results.json").read_text())
    findings = [Finding(**f) for f in results["findings"]]

    kinds = [[kind] for kind in KINDS]
    first = findings[0]
    assert (first.kind, first.partition, first.op_class) == ("HOT", "hot", None), first
    assert "GET and PUT together" in first.message and "GET " in first.message and "PUT " in first.message
    (total,) = [row for row in results["partitions"] if row["partition"] == "hot" and row["op_class"] == "ALL"]
    peak = total["offered_peak_eps"]  # ~170 % of the target: 2 keys to be under it, 3 for headroom
    sized = f"at least {keys_needed(peak, 2000)} PartitionKeys to be under its 2,000/s target, {keys_needed(peak, 2000, 0.8)}"
    assert sized in first.remedy, first.remedy
    on_hot = [f for f in findings if f.partition == "hot"]
    assert [f.kind for f in on_hot if f.kind in ("HOT", "WARM", "COOL")] == ["HOT"]  # judged once
    assert {row["finding"] for row in results["partitions"] if row["partition"] == "hot"} == {"HOT"}
    assert not contradictions(findings)
    throttled = next(f for f in on_hot if f.kind == "THROTTLED")
    assert throttled.cause == "throttled" and "for the partition over the throttling emulator's 2,000" in throttled.message
    unserved = next(f for f in on_hot if f.kind == "UNSERVED")
    assert (unserved.cause, unserved.act) == ("throttled", "spread"), unserved
    assert "PartitionKeys" in unserved.remedy and "more load generators would not change that" in unserved.remedy
    assert "Locust workers" not in unserved.remedy

    console = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ") and line.split()[:1] in kinds]
    assert console == [f.kind for f in findings][: len(console)] and console

    document = valid(junit_file.read_bytes())  # both JUnit schemas
    failed = {case.get("name"): case.find("failure") for case in document.iter("testcase") if case.find("failure") is not None}
    assert set(failed) == {"partition 'hot' level", "HOT"}  # its level, and the kind --fail-on names; nothing else
    assert failed["partition 'hot' level"].get("message") == first.message

    with chromium_page() as page:
        page.goto((tmp_path / "report.html").as_uri())
        page.wait_for_load_state("load")
        rows = page.eval_on_selector_all(
            "#findings-table tr.finding", "rows => rows.map(r => [r.dataset.kind, r.children[1].innerText])"
        )
        assert rows[0] == ["HOT", "hot"], rows
        assert [kind for kind, _ in rows] == [f.kind for f in findings if f.kind not in CHECKLIST]
        assert [kind for kind in console if kind not in CHECKLIST] == [kind for kind, _ in rows][: len(console)]
        note = page.inner_text("#what-ran")
        assert "behind the throttling emulator" in note and "2,000 entities/s per partition" in note
        assert "20,000 per account" in note and "never throttles" not in note
        page.screenshot(path=str(artifacts / "report-default-job.png"), full_page=True)
