"""report.html: rendered from results alone, self-contained, and checked in real headless Chromium."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from browser import chromium_page
from conftest import ROOT
from synthetic import recorded
from test_results import run_info

from loadtest.checklist import CHECKLIST
from loadtest.report import render
from loadtest.summary import build
from loadtest.verdict import assess


def test_report_renders_every_chart_inline_and_every_finding(tmp_path):
    seconds = {
        t: [{"op": "read", "entities": 5}, {"op": "batch", "op_class": "PUT", "entities": 100, "ms": 90.0}] for t in range(15)
    }
    seconds[3].append({"error": "ResourceNotFound"})
    results = assess(build(recorded(seconds, steady_from=2), run_info(partition_target=50)))
    html = render(results, tmp_path).read_text()
    assert html.count('src="data:image/png;base64,') == 5
    assert "http://" not in html.replace("http://127.0.0.1", "") and "https://" not in html
    for finding in results.findings:
        assert finding.remedy in html
    assert html.count('class="finding"') == len(results.findings)


@pytest.fixture(scope="module")
def measured_report(azurite, tmp_path_factory):
    from conftest import run_loadtest

    out = tmp_path_factory.mktemp("report")
    done = run_loadtest(
        "run",
        "-t",
        "6s",
        "-u",
        "3",
        "-r",
        "3",
        "--seed-entities",
        "200",
        "--out",
        str(out),
        "--connection-string",
        azurite.connection_string,
    )
    assert done.code == 0, done.output
    return out


@pytest.mark.browser
def test_report_opens_in_headless_chromium_with_charts_and_findings(measured_report, artifacts):
    results = json.loads((measured_report / "results.json").read_text())
    with chromium_page() as page:
        outside = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
        page.goto((measured_report / "report.html").as_uri())
        page.wait_for_load_state("load")
        widths = page.eval_on_selector_all("img.chart", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
        assert len(widths) == 5 and all(w > 300 for w in widths), widths  # heat map included
        kinds = page.eval_on_selector_all("#findings-table tr.finding", "rows => rows.map(r => r.dataset.kind)")
        advice = page.eval_on_selector_all("#checklist-table tr.finding", "rows => rows.map(r => r.dataset.kind)")
        assert kinds == [f["kind"] for f in results["findings"] if f["kind"] not in CHECKLIST] and kinds
        assert advice == [f["kind"] for f in results["findings"] if f["kind"] in CHECKLIST]  # in their own section
        names = page.inner_text("#requests-table")
        for name in results["workload"]["names"]:
            assert name["name"] in names and f"{name['requests']:,}" in names
        partitions = page.inner_text("#partitions-table")
        for row in results["partitions"]:
            assert f"{row['entities']:,}" in partitions
        assert "GET" in partitions and "PUT" in partitions
        page.screenshot(path=str(artifacts / "report.png"), full_page=True)
    assert outside == [], f"the report fetched from outside: {outside}"


BLOCKED_IMPORT = """
import importlib.abc, sys
from pathlib import Path

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "azure" or name.startswith("azure."):
            raise ImportError(f"blocked: {name}")
        return None

sys.meta_path.insert(0, Block())
import loadtest.report
from loadtest.results import Results

out = Path(sys.argv[1])
loadtest.report.render(Results.load_file(out / "results.json"), out)
heavy = sorted(m for m in sys.modules if m.startswith(("azure", "loadtest.azurite", "loadtest.target", "loadtest.table")))
print("heavy:", heavy)
"""


def test_the_report_renders_a_saved_run_without_the_sdk_or_process_code(tmp_path):
    seconds = {t: [{"op": "read", "entities": 5}, {"op": "upsert", "op_class": "PUT", "entities": 1}] for t in range(12)}
    assess(build(recorded(seconds, steady_from=2), run_info())).write(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_IMPORT, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "heavy: []" in done.stdout
    assert "partitions-table" in (tmp_path / "report.html").read_text()
