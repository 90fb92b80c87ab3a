"""The live partition view: its figures from synthetic buckets, and ``locust -f`` serving it in headless Chromium."""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from types import SimpleNamespace

import pytest
from browser import chromium_page
from helpers import run_info, web_ui_process
from locust.argument_parser import parse_options
from locust.env import Environment
from synthetic import fire, listener, recorded

import loadtest.counting.counts
from loadtest.child_process import free_port
from loadtest.findings.assess import assess
from loadtest.live import partitions_tab as live
from loadtest.live.partitions_tab import live_view
from loadtest.options.settings import Settings, namespace
from loadtest.redact import AZURITE_KEY
from loadtest.results.summary import build


def test_live_view_ranks_partitions_and_shows_the_rest_together():
    seconds = {
        t: [{"partition": f"p{i:02d}", "entities": 100 - i} for i in range(12)]
        + [{"partition": "p00", "op": "upsert", "op_class": "PUT", "entities": 50}]
        for t in range(12)
    }
    metrics = recorded(seconds)
    view = live_view(metrics, target=120, now=1_000_000 + 12.5, top_n=3)
    labels = [r["partition"] for r in view["rows"]]
    assert labels == ["p00", "p01", "p02", "other partitions (9), hottest p03"]
    top = view["rows"][0]
    assert (top["get_eps"], top["put_eps"], top["peak_eps"]) == (100.0, 50.0, 150.0)
    assert top["finding"] == "HOT" and top["ratio"] == "125%"
    assert view["rows"][1]["finding"] == "WARM"  # 99/120
    other = view["rows"][3]
    assert other["get_eps"] == sum(100 - i for i in range(3, 12))
    assert (other["peak_eps"], other["finding"]) == (97.0, "WARM")  # its hottest, p03: 97/120
    assert view["partitions"] == 12 and len(view["chart"]["series"]) == 4
    heat = view["chart"]["heat"]["other partitions (9)"]  # the heat map holds its hottest against the target
    assert view["chart"]["series"]["other partitions (9)"][-1] == other["get_eps"] and heat[-1] == 97


def test_the_other_partitions_row_is_judged_by_its_hottest_member_not_their_sum():
    """17 cool partitions at 10 entities/s behind the top 3: together 170/s, each 10 % of a 100/s target. The group
    shows its load (the sum) and is judged by its hottest member: COOL. It once showed HOT (170 %)."""
    seconds = {t: [{"partition": f"p{i:02d}", "entities": 50 if i < 3 else 10} for i in range(20)] for t in range(12)}
    view = live_view(recorded(seconds), target=100, now=1_000_000 + 12.5, top_n=3)
    other = view["rows"][3]
    assert (other["get_eps"], other["peak_eps"], other["ratio"], other["finding"]) == (170.0, 10.0, "10%", "COOL")
    assert other["partition"].startswith("other partitions (17), hottest p")


def test_a_hot_partition_among_the_others_makes_their_row_hot_by_its_own_figure():
    """One of the others at 200/s (200 % of its target) beside ten at 5/s: the row is HOT at 200 %, naming it."""
    seconds = {
        t: [{"partition": p, "entities": 300} for p in ("a", "b", "c")]
        + [{"partition": "d", "entities": 200}]
        + [{"partition": f"e{i}", "entities": 5} for i in range(10)]
        for t in range(12)
    }
    view = live_view(recorded(seconds), target=100, now=1_000_000 + 12.5, top_n=3)
    other = view["rows"][3]
    assert (other["get_eps"], other["peak_eps"], other["ratio"], other["finding"]) == (250.0, 200.0, "200%", "HOT")
    assert other["partition"] == "other partitions (11), hottest d"


def test_in_an_open_loop_the_other_partitions_are_judged_by_their_hottest_members_demand():
    start = 1_000_000
    seconds = {
        t: [{"partition": "top", "entities": 500}]
        + [{"partition": f"k{i}", "entities": 10, "unsent": [(start + t, f"k{i}", "GET", 10)]} for i in range(30)]
        for t in range(6)
    }
    (_, other) = live_view(recorded(seconds, start=start), target=100, now=start + 6.5, top_n=1, open_loop=True)["rows"]
    assert (other["demand_eps"], other["demand_peak_eps"], other["ratio"], other["finding"]) == (600.0, 20.0, "20%", "COOL")


def test_live_view_leaves_out_the_second_still_filling():
    metrics = recorded({0: [{"entities": 10}], 1: [{"entities": 10}], 2: [{"entities": 999}]})
    view = live_view(metrics, target=100, now=1_000_000 + 2.5)
    assert view["chart"]["series"]["hot"] == [10, 10]


@pytest.fixture
def web_ui(azurite, tmp_path):
    """``locust -f loadtest/locustfile.py`` with its web UI on a free loopback port, stopped by PID."""
    port = free_port()
    log = tmp_path / "locust.log"
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    args = ["-m", "locust", "-f", "loadtest/locustfile.py", "--web-host", "127.0.0.1", "--web-port", str(port)]
    args += ["--seed-entities", "200", "--out", str(tmp_path / "report")]
    with web_ui_process(args, port=port, env=env, log=log) as (child, url):
        yield url, tmp_path, log
    assert child.returncode == 0, log.read_text()


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


@pytest.mark.browser
def test_web_ui_starts_a_run_from_the_form_and_shows_the_partition_view(web_ui, artifacts):
    url, out, log = web_ui
    with chromium_page(1300, 1000) as page:
        page.goto(url + "/")
        page.fill("input[name=userCount]", "3")
        page.fill("input[name=spawnRate]", "3")
        page.click("text=Custom parameters")
        for option in ("partitionKey", "mix", "entitySize", "seedEntities", "partitionTarget", "batchSize"):
            assert page.locator(f"input[name={option}]").count() == 1, option
        assert page.locator("input[name=connectionString]").count() == 0  # secrets stay out of the form
        page.fill("input[name=partitionKey]", "orders")
        page.fill("input[name=partitionTarget]", "50")
        page.fill("input[name=arrivalRate]", "60")  # open loop: the partition view shows the demand beside served
        page.click("button:has-text('Start')")

        page.click("[role=tab]:has-text('Partitions')", timeout=30_000)
        row = page.locator("#partition-stress-table tr:has(td:text-is('orders'))")
        row.wait_for(timeout=30_000)
        page.wait_for_selector("#partition-stress-table tr[data-finding=HOT]", timeout=30_000)
        page.wait_for_function(
            "() => parseFloat(document.querySelector('#partition-stress-table tbody td:nth-child(4)').innerText) > 0",
            timeout=15_000,
        )  # an open loop: the demand now beside served
        cells = row.locator("td").all_inner_texts()
        assert float(cells[1]) > 0 and float(cells[2]) > 0, cells  # GET and PUT entities/s now
        assert cells[6] == "50", cells
        assert "target 50/s" in (page.get_attribute("#partition-stress-load", "aria-label") or "")
        page.screenshot(path=str(artifacts / "webui-partitions-tab.png"), full_page=True)

        urllib.request.urlopen(urllib.request.Request(url + "/stop", method="POST"), timeout=30)
        page.click("a:has-text('Hot-partition report of the last test')", timeout=60_000)
        page.wait_for_selector("#findings-table", timeout=15_000)
        assert "orders" in page.inner_text("#partitions-table")
    data = _get_json(url + "/partition-stress/data")
    assert data["state"] == "stopped" and data["report"] == "/partition-stress/report"
    results = json.loads((out / "report" / "results.json").read_text())
    assert {r["partition"] for r in results["partitions"]} == {"orders"}
    assert results["arrivals"]["rate"] == 60 and all(r["offered_mean_eps"] > 0 for r in results["partitions"])
    assert "HOT" in {f["kind"] for f in results["findings"]}
    page_source = urllib.request.urlopen(url + "/", timeout=5).read().decode()
    assert AZURITE_KEY not in page_source and AZURITE_KEY not in log.read_text()


def test_in_an_open_loop_the_live_view_shows_demand_and_judges_it():
    start = 1_000_000
    seconds = {t: [{"entities": 1}] * 49 + [{"entities": 1, "unsent": [(start + t, "hot", "GET", 1)] * 150}] for t in range(6)}
    metrics = recorded(seconds, start=start)
    (row,) = live_view(metrics, target=100, now=start + 6.5, open_loop=True)["rows"]
    assert (row["get_eps"], row["demand_eps"], row["demand_peak_eps"]) == (50.0, 200.0, 200.0)
    assert (row["ratio"], row["finding"]) == ("200%", "HOT")
    (closed,) = live_view(metrics, target=100, now=start + 6.5)["rows"]
    assert "demand_eps" not in closed and closed["finding"] == "COOL"
    columns = {loop: [c["key"] for c in live_view(metrics, target=100, open_loop=loop)["columns"]] for loop in (True, False)}
    assert set(columns[True]) - set(columns[False]) == {"demand_eps", "demand_peak_eps"}  # the table's, as the rows'


def test_the_charts_draw_each_rows_served_demand_and_throttled_seconds():
    """The tab's chart series, second by second: what each row served, asked for (open loop only) and the throttled
    attempts; the row names its series."""
    start = 1_000_000
    seconds = {
        t: [{"entities": 10, "partition": "hot", "attempts": 2, "throttled": 1 if t % 2 else 0}]
        + [{"entities": 1, "partition": "cool", "unsent": [(start + t, "cool", "GET", 1)] * 3}]
        for t in range(6)
    }
    metrics = recorded(seconds, start=start)
    view = live_view(metrics, target=100, now=start + 6.5, open_loop=True)
    chart = view["chart"]
    assert chart["t"] == [0, 1, 2, 3, 4, 5] and view["open_loop"] is True
    assert chart["series"] == {"hot": [10] * 6, "cool": [1] * 6}
    assert chart["demand"] == {"hot": [10] * 6, "cool": [4] * 6}
    assert chart["throttled"] == {"hot": [0, 1, 0, 1, 0, 1], "cool": [0] * 6}
    assert chart["heat"] == chart["series"]  # a partition of its own: its own entities
    assert [(row["partition"], row["series"], row["finding"]) for row in view["rows"]] == [
        ("hot", "hot", "THROTTLED"),
        ("cool", "cool", "COOL"),
    ]
    assert live_view(metrics, target=100, now=start + 6.5)["chart"]["demand"] == {}  # closed loop: no demand


def test_the_live_chart_stops_with_the_test():
    metrics = recorded({t: [{"entities": 10}] for t in range(5)})
    at_stop = live_view(metrics, target=100, now=metrics.stopped)
    later = live_view(metrics, target=100, now=metrics.stopped + 60)
    assert later["chart"] == at_stop["chart"] and later["rows"] == at_stop["rows"]
    assert 0 not in later["chart"]["series"]["hot"]
    metrics.stopped = None  # a new test running: the chart moves on with the clock
    assert len(live_view(metrics, target=100, now=metrics.started + 60)["chart"]["t"]) > len(at_stop["chart"]["t"])


def _run_with_an_early_burst(monkeypatch, aged_after_s: int) -> tuple:
    """400 s of the real listener compacting each second: 'steady' at 50 entities/s throughout, 'early' at 300/s
    (throttled twice a second) from 10 s to 30 s only; the view at the end."""
    monkeypatch.setattr(loadtest.counting.counts, "AGED_AFTER_S", aged_after_s)
    start = 1_000_000
    clock, env, metrics = listener(float(start))
    for t in range(400):
        clock.now = start + t + 0.5
        fire(env, partition="steady", entities=50)
        if 10 <= t < 30:
            fire(env, partition="early", entities=300, attempts=3, throttled=2)
        metrics.compact()
    return metrics, live_view(metrics, target=100, now=start + 400.5)


def test_the_live_views_peaks_and_throttling_cover_the_seconds_put_away(monkeypatch):
    """A burst long put away (its buckets no longer held) still shows its peak and THROTTLED, as if every second
    were held: the seconds held stay the last two minutes' however long the run."""
    metrics, view = _run_with_an_early_burst(monkeypatch, 120)
    assert len(metrics.buckets) <= 125 and metrics.aged.rows > 250
    rows = {row["partition"]: row for row in view["rows"]}
    assert (rows["early"]["get_eps"], rows["early"]["peak_eps"], rows["early"]["finding"]) == (0.0, 300.0, "THROTTLED")
    assert (rows["steady"]["peak_eps"], rows["steady"]["ratio"], rows["steady"]["finding"]) == (50.0, "50%", "COOL")
    _, whole = _run_with_an_early_burst(monkeypatch, 10_000)  # nothing put away: every second held
    assert {r["partition"]: (r["peak_eps"], r["ratio"], r["finding"]) for r in whole["rows"]} == {
        r["partition"]: (r["peak_eps"], r["ratio"], r["finding"]) for r in view["rows"]
    }
    assert view["chart"]["series"]["steady"] == whole["chart"]["series"]["steady"]


def test_a_test_run_without_its_report_shows_its_findings_in_the_tab_and_says_why_there_is_no_page(tmp_path, monkeypatch):
    """--no-report in the web UI: the stopped test's findings still reach the tab (they come from its results, not
    its page), and ``/partition-stress/report`` says the report was left undrawn and how to draw it."""
    monkeypatch.setattr(sys, "argv", ["locust"])  # Locust's UI reads its form's extra arguments from the command line
    env = Environment(parsed_options=parse_options([]))
    env.create_local_runner()
    env.create_web_ui("127.0.0.1", 0, delayed_start=True)  # its pages through Flask's test client
    counted = recorded({t: [{"op": "read", "entities": 500}] for t in range(12)}, steady_from=1)
    results = assess(build(counted, run_info(partition_target=100)))
    run = SimpleNamespace(
        settings=Settings.from_options(namespace(no_report=True)), metrics=counted, cluster=SimpleNamespace(lost={}),
        out=tmp_path, results=results,
    )  # fmt: skip
    live.register(env, run)
    env.runner.update_state("stopped")
    client = env.web_ui.app.test_client()
    data = json.loads(client.get("/partition-stress/data").get_data(as_text=True))
    assert data["report"] is None and "HOT" in {f["kind"] for f in data["findings"]}, data["findings"]
    page = client.get("/partition-stress/report")
    assert page.status_code == 404 and "--no-report" in page.get_data(as_text=True)
