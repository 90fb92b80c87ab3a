"""report.html: rendered from results alone, self-contained, and checked in real headless Chromium."""

from __future__ import annotations

import json

import pytest
from browser import chromium_page
from synthetic import recorded
from test_results import run_info

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
        assert kinds == [f["kind"] for f in results["findings"]] and kinds
        partitions = page.inner_text("#partitions-table")
        for row in results["partitions"]:
            assert f"{row['entities']:,}" in partitions
        assert "GET" in partitions and "PUT" in partitions
        page.screenshot(path=str(artifacts / "report.png"), full_page=True)
    assert outside == [], f"the report fetched from outside: {outside}"
