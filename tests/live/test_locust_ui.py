"""The tool's build of Locust's web UI (``webui/``, served by ``loadtest.live.locust_ui``): the Partitions tab in
real headless Chromium, beside Locust's own tabs, in light and dark mode; and the same panel in Locust's HTML report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request

import pytest
from browser import chromium_page
from helpers import ROOT, web_ui_process

from loadtest.child_process import free_port
from loadtest.live import locust_ui
from loadtest.redact import AZURITE_KEY

#: What each PartitionKey holds after its p0…p3: markup that sets ``window.__pwned`` wherever a page takes a key as
#: HTML (an ECharts formatter's string, innerHTML), valid in Azure (no / \ # ? or control characters); ``&amp;`` shows
#: the key is not decoded either. Every page shows it as typed, as text.
PAYLOAD = '"><img src=x onerror=window.__pwned=1>&amp;<script>window.__pwned=2<'
#: four partitions, 70 % of the operations on one of them (hotspot:70,25: 70 % on a quarter of the keys), each one
#: entity, in an open loop of 60 operations/s: about 42 entities/s on the hot key against a target of 20, about 6/s on
#: each other one
WORKLOAD = {
    "keyStrategy": "template:{p:4}" + PAYLOAD,
    "skew": "hotspot:70,25",
    "mix": "read=70,upsert=30",
    "partitionTarget": "20",
    "arrivalRate": "60",
}
FLAGS = [f"--{re.sub('[A-Z]', lambda c: '-' + c.group().lower(), name)}={value}" for name, value in WORKLOAD.items()]


def test_the_build_is_there():
    """scripts/setup.sh builds it (the tests' set-up too); without it every check below would pass on Locust's UI."""
    assert locust_ui.built(), "run scripts/setup.sh: it builds webui/ into loadtest/live/webui"


def test_the_web_ui_serves_the_build_unless_the_user_gave_a_build_of_their_own(tmp_path, monkeypatch):
    from locust.argument_parser import parse_options
    from locust.env import Environment

    monkeypatch.setattr(sys, "argv", ["locust"])  # Locust's UI reads its form's extra arguments from the command line

    env = Environment(parsed_options=parse_options([]))
    env.create_local_runner()
    env.create_web_ui("127.0.0.1", 0)
    assert locust_ui.serve(env)
    page = env.web_ui.app.test_client().get("/").get_data(as_text=True)
    assert "<title>Locust · partition-stress</title>" in page and "window.templateArgs = {" in page
    assert env.web_ui.app.test_client().get("/assets/favicon-light.png").status_code == 200  # Locust's, not the build's

    own = tmp_path / "dist"
    (own / "assets").mkdir(parents=True)
    (own / "index.html").write_text("my own UI")
    env = Environment(parsed_options=parse_options(["--build-path", str(own)]))
    env.create_local_runner()
    env.create_web_ui("127.0.0.1", 0, build_path=str(own))
    assert not locust_ui.serve(env)
    assert env.web_ui.app.test_client().get("/").get_data(as_text=True) == "my own UI"


def test_each_html_report_locust_renders_gets_the_panel_once_and_nothing_else_changes(monkeypatch):
    """Registered for each test a process runs, the section still goes in once; Locust's other pages are left alone;
    a partition named like a closing tag cannot end the script that holds the data."""
    import locust.html

    monkeypatch.setattr(locust.html, "render_template_from", locust.html.render_template_from)  # restored after
    view = {"target": 20, "rows": [{"partition": "</script><b>x"}], "chart": {"t": [], "series": {}}}
    for _ in range(3):
        locust_ui.with_partitions(lambda: view)
    page = locust.html.render_template_from("report.html", template_args={"is_report": True}, theme="light")
    assert page.count('id="partition-stress-report"') == 1 and page.count("window.partitionStress = ") == 1
    data = page.split("window.partitionStress = ", 1)[1].split("</script>", 1)[0]
    assert json.loads(data) == view
    assert "partition-stress" not in locust.html.render_template_from("index.html", template_args={})
    locust_ui.with_partitions(lambda: None)  # nothing to show (no runner): Locust's report as it ships
    assert "partition-stress" not in locust.html.render_template_from("report.html", template_args={}, theme="")


def _label(page, chart: str) -> str:
    return page.get_attribute(f"#partition-stress-{chart}", "aria-label") or ""


def _heat_seconds(page) -> int:
    return int(re.search(r"by (\d+) seconds", _label(page, "heatmap")).group(1))


def _tooltip(page, chart: str, x: float, y: float) -> str:
    """The text of the tooltip ``chart`` shows with the mouse at (x, y) (hovered again while a poll redraws it)."""
    for _ in range(10):
        page.mouse.move(x, y - 2)
        page.mouse.move(x, y)
        text = page.evaluate(
            "chart => [...document.querySelectorAll(`#partition-stress-${chart} div`)]"
            ".filter(d => d.style.display === 'block').map(d => d.innerText).join('\\n')",
            chart,
        )
        if PAYLOAD in text:
            return text
        page.wait_for_timeout(200)
    pwned = page.evaluate("() => window.__pwned")
    raise AssertionError(f"no tooltip with a key as typed on the {chart} chart: {text!r} (window.__pwned: {pwned})")


def _hover_charts(page) -> None:
    """Hover each row of the heat map and the load chart, as a user reads their tooltips: each shows its keys as typed,
    and nothing in a key runs (``window.__pwned`` stays unset)."""
    page.locator("#partition-stress-heatmap").scroll_into_view_if_needed()
    box = page.locator("#partition-stress-heatmap").bounding_box()
    rows = box["height"] - 120  # the grid's rows (40 px above, 80 below)
    shown = set()
    for row in range(4):
        y = box["y"] + 40 + rows * (row + 0.5) / 4
        shown.add(_tooltip(page, "heatmap", box["x"] + box["width"] - 40, y).split("\n")[0])  # its key, then its figure
    assert shown == {f"p{i}{PAYLOAD}" for i in range(4)}, shown
    page.locator("#partition-stress-load").scroll_into_view_if_needed()
    box = page.locator("#partition-stress-load").bounding_box()
    lines = _tooltip(page, "load", box["x"] + box["width"] / 2, box["y"] + box["height"] / 2).split("\n")
    assert all(any(line.startswith(f"p{i}{PAYLOAD}") for line in lines) for i in range(4)), lines  # a line each
    assert page.evaluate("() => window.__pwned") is None


def _check_tab(page) -> tuple[str, list[str]]:
    """The tab as a user reads it: four rows, the hot one HOT and the others COOL, a line per partition and the
    target line, and a heat map that grows as seconds pass. Answers the hot partition and the chart's lines."""
    page.wait_for_selector("#partition-stress-table tr[data-finding=HOT]", timeout=30_000)
    page.wait_for_function("() => document.querySelectorAll('#partition-stress-table tbody tr').length === 4", timeout=15_000)
    findings = page.eval_on_selector_all("#partition-stress-table tbody tr", "rows => rows.map(r => r.dataset.finding)")
    assert sorted(findings) == ["COOL", "COOL", "COOL", "HOT"], findings
    hot = page.inner_text("#partition-stress-table tr[data-finding=HOT] td >> nth=0")
    lines = _label(page, "load").split(": ", 1)[1].split("; ")
    assert f"{hot} · HOT" in lines and "target 20/s" in lines, lines
    assert len([line for line in lines if not line.startswith(("demand, ", "target"))]) == 4, lines  # a line each
    assert len([line for line in lines if line.startswith("demand, ")]) == 4, lines  # open loop: demand beside served
    seconds = _heat_seconds(page)
    page.wait_for_function(
        "n => +/by (\\d+) seconds/.exec(document.querySelector('#partition-stress-heatmap').getAttribute('aria-label'))[1] > n",
        arg=seconds,
        timeout=15_000,
    )  # the heat map fills as seconds pass
    assert page.eval_on_selector("#partition-stress-heatmap canvas", "c => c.width * c.height") > 0
    return hot, lines


@pytest.mark.browser
def test_loadtest_run_web_shows_four_partitions_one_hot_in_the_partitions_tab_light_and_dark(azurite, tmp_path, artifacts):
    port, out = free_port(), tmp_path / "out"
    args = ["-m", "loadtest", "run", "--web", "--web-port", str(port), "--seed-entities", "40", "--out", str(out)]
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    with web_ui_process(args, port=port, env=env, log=tmp_path / "web.log") as (_, url):
        with chromium_page(1300, 1100) as page:
            page.goto(url + "/")
            page.fill("input[name=userCount]", "4")
            page.fill("input[name=spawnRate]", "4")
            page.click("text=Custom parameters")
            for name, value in WORKLOAD.items():
                page.fill(f"input[name={name}]", value)
            page.click("button:has-text('Start')")

            page.click("[role=tab]:has-text('Partitions')", timeout=30_000)
            hot, _ = _check_tab(page)
            assert page.locator("#partition-stress-findings").count() == 0  # a running test's are its rows'
            assert hot.endswith(PAYLOAD)  # a key as typed, in the table
            _hover_charts(page)
            page.screenshot(path=str(artifacts / "partitions-tab-light.png"), full_page=True)

            # Locust's own tabs still work beside it
            page.click("[role=tab]:has-text('Statistics')")
            page.wait_for_selector("td:has-text('GET point read')", timeout=15_000)
            page.click("[role=tab]:has-text('Charts')")
            page.wait_for_function("() => document.querySelectorAll('canvas').length >= 3", timeout=15_000)  # its charts
            assert page.locator("#partition-stress").count() == 0

            # dark mode, as Locust keeps it (its toggle writes localStorage), the tab opened by its address
            page.evaluate("() => localStorage.setItem('theme', 'dark')")
            page.goto(url + "/partition-stress/")  # the side page of earlier versions leads to the tab
            assert page.url.endswith("/?tab=partition-stress"), page.url
            _check_tab(page)
            background = page.eval_on_selector(
                "#partition-stress-table", "t => getComputedStyle(t.closest('.MuiPaper-root')).backgroundColor"
            )
            assert sum(int(v) for v in re.findall(r"\d+", background)[:3]) < 3 * 80, background  # a dark surface
            page.screenshot(path=str(artifacts / "partitions-tab-dark.png"), full_page=True)

            urllib.request.urlopen(urllib.request.Request(url + "/stop", method="POST"), timeout=30)
            finding = page.wait_for_selector("#partition-stress-findings [data-kind=HOT]", timeout=60_000)
            assert f"'{hot}'" in finding.inner_text()  # the stopped test's findings, as its report has them
            page.screenshot(path=str(artifacts / "partitions-tab-stopped.png"), full_page=True)
        with urllib.request.urlopen(url + "/stats/report?download=1", timeout=30) as response:  # "Download report"
            downloaded = response.read().decode()
    results = json.loads((out / "results.json").read_text())
    assert {r["partition"] for r in results["partitions"] if r["finding"] == "HOT"} == {hot}
    assert 'id="partition-stress-report"' in downloaded and AZURITE_KEY not in downloaded


@pytest.mark.browser
def test_locusts_html_report_carries_the_partitions_panel(azurite, tmp_path, artifacts):
    html = tmp_path / "locust.html"
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    args = [sys.executable, "-m", "loadtest", "run", "-t", "4s", "-u", "4", *FLAGS, "--seed-entities", "40"]
    args += ["--out", str(tmp_path / "out"), "--html", str(html)]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: the verdict, a hot partition
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    hot = {r["partition"] for r in results["partitions"] if r["finding"] == "HOT"}
    with chromium_page(1300, 1100) as page:
        page.goto(html.as_uri())
        page.wait_for_selector("#partition-stress-report #partition-stress-table tbody tr", timeout=15_000)
        rows = page.eval_on_selector_all(
            "#partition-stress-table tbody tr", "rows => rows.map(r => [r.cells[0].innerText, r.dataset.finding])"
        )
        assert len(rows) == 4 and {p for p, f in rows if f == "HOT"} == hot, (rows, hot)
        assert sorted(p for p, _ in rows) == [f"p{i}{PAYLOAD}" for i in range(4)]  # as typed
        assert "target 20/s" in _label(page, "load") and _heat_seconds(page) >= 3
        assert page.locator("text=Response Time Statistics").count() >= 1  # Locust's own report is still whole
        _hover_charts(page)
        page.locator("#partition-stress-report").screenshot(path=str(artifacts / "html-report-partitions.png"))
    with chromium_page(1300, 1100) as page:  # the tool's own report of the same run
        page.goto((tmp_path / "out" / "report.html").as_uri())
        shown = page.inner_text("#partitions-table")
        assert all(f"p{i}{PAYLOAD}" in shown for i in range(4)) and page.evaluate("() => window.__pwned") is None
    assert AZURITE_KEY not in html.read_text()
