"""report.html: rendered from results alone, self-contained, and checked in real headless Chromium."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest
from browser import chromium_page
from helpers import ROOT, run_info, run_loadtest, without_imports
from markupsafe import escape
from synthetic import recorded

from loadtest.findings.assess import assess
from loadtest.report import render
from loadtest.results.finding_kinds import CHECKLIST
from loadtest.results.summary import build


def test_report_renders_every_chart_inline_and_every_finding(tmp_path):
    seconds = {
        t: [{"op": "read", "entities": 5}, {"op": "batch", "op_class": "PUT", "entities": 100, "ms": 90.0}] for t in range(15)
    }
    seconds[3].append({"error": "ResourceNotFound"})
    results = assess(build(recorded(seconds, steady_from=2), run_info(partition_target=50)))
    html = render(results, tmp_path).read_text()
    assert html.count('src="data:image/svg+xml;base64,') == 5
    assert "http://" not in html.replace("http://127.0.0.1", "") and "https://" not in html
    for finding in results.findings:
        assert str(escape(finding.remedy)) in html  # text, escaped as every string from input is
    assert html.count('class="finding"') == len(results.findings)


@pytest.mark.browser
def test_report_opens_in_headless_chromium_with_charts_and_findings(measured_run, artifacts):
    results = json.loads((measured_run / "results.json").read_text())
    with chromium_page() as page:
        outside = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
        page.goto((measured_run / "report.html").as_uri())
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


BLOCKED_IMPORT = (
    without_imports("azure")
    + """
from pathlib import Path

import loadtest.report
from loadtest.results.form import Results

out = Path(sys.argv[1])
loadtest.report.render(Results.load_file(out / "results.json"), out)
prefixes = ("azure", "loadtest.account.azurite", "loadtest.account.endpoint",
            "loadtest.testbed.table", "loadtest.testbed.seeding")
heavy = sorted(m for m in sys.modules if m.startswith(prefixes))
print("heavy:", heavy)
"""
)


def test_the_report_renders_a_saved_run_without_the_sdk_or_process_code(tmp_path):
    seconds = {t: [{"op": "read", "entities": 5}, {"op": "upsert", "op_class": "PUT", "entities": 1}] for t in range(12)}
    assess(build(recorded(seconds, steady_from=2), run_info())).write(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_IMPORT, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "heavy: []" in done.stdout
    assert "partitions-table" in (tmp_path / "report.html").read_text()


def ceiling_results():
    """A synthetic run of three 5-second steps (10, 20, 25 reads/s on 'hot', the last one throttled) and its search."""
    from loadtest.ceiling.judge import judged
    from loadtest.ceiling.plan import Plan, StepWindow
    from loadtest.options.settings import namespace
    from loadtest.options.stress import CEILING_OPTIONS

    rates = {0: 10, 1: 20, 2: 25}
    seconds = {t: [{"op": "read"}] * rates[t // 5] for t in range(15)}
    for t in range(10, 15):
        seconds[t] = seconds[t] + [{"op": "read", "throttled": 1, "attempts": 2}] * 5
    start = 1_000_000.0
    given = {"ceiling_start": "10", "ceiling_step": "10", "ceiling_max": "30", "step_time": "5s"}
    plan = Plan.from_options(namespace(**{**{o.dest: o.default for o in CEILING_OPTIONS}, **given}))
    windows = [
        StepWindow(
            index=k, offered=plan.offered(k), users=plan.users(k), spawn_rate=2, began=start + 5 * k, ended=start + 5 * k + 5
        )
        for k in range(3)
    ]
    counts, info = recorded(seconds, start=start), run_info(partition_target=40)
    results = build(counts, info)
    results.ceiling = judged(plan, windows, True, counts, info)
    return assess(results)


def drawn(monkeypatch, results) -> dict[str, object]:
    """Every chart's matplotlib figure, as drawn for the report (captured before it becomes an image)."""
    from loadtest.report import canvas, ceiling_chart, charts, heat_map

    figures, image = [], canvas.image

    def keep(fig):
        fig.canvas.draw()
        figures.append(fig)
        return image(fig)

    for module in (canvas, ceiling_chart, charts, heat_map):  # each that makes an image holds its own name for it
        monkeypatch.setattr(module, "image", keep)
    names = list(charts.all_charts(results))
    return dict(zip(names, figures, strict=True))


def test_no_chart_legend_covers_the_data_and_the_ceiling_chart_is_drawn(monkeypatch):
    results = ceiling_results()
    assert [s["good"] for s in results.ceiling["steps"]] == [True, True, False]
    figures = drawn(monkeypatch, results)
    assert "ceiling" in figures and len(figures) == 6
    legends = 0
    for name, fig in figures.items():
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            legends += 1
            box = legend.get_window_extent()
            for other in fig.axes:  # the plotting areas (both y axes of the ceiling chart, a colour bar)
                assert not box.overlaps(other.get_window_extent()), f"{name}: the legend covers the plot"
    assert legends == 5  # every chart with lines has one; the heat map has a colour bar instead


def test_the_heat_map_is_as_tall_as_its_rows(monkeypatch):
    few = {t: [{"op": "read", "partition": f"p{i}"} for i in range(2)] for t in range(5)}
    many = {t: [{"op": "read", "partition": f"p{i}"} for i in range(12)] for t in range(5)}
    heights = [drawn(monkeypatch, assess(build(recorded(s), run_info())))["heat"].get_figheight() for s in (few, many)]
    assert heights[1] - heights[0] == pytest.approx(10 * 0.28)  # the same height for each of the 10 more rows


def test_the_heat_maps_colour_bar_label_fits_beside_a_one_row_map(monkeypatch):
    one = {t: [{"op": "read", "partition": "p0"}] for t in range(5)}
    fig = drawn(monkeypatch, assess(build(recorded(one), run_info())))["heat"]
    bar = fig.axes[-1]  # the colour bar's own axes
    label = bar.yaxis.label
    assert label.get_text() and label.get_window_extent().height <= bar.get_window_extent().height + 1


def test_the_charts_shade_an_outages_seconds(monkeypatch):
    seconds = {t: [{"op": "read"}] * 20 for t in range(20) if not 8 <= t < 14}
    seconds[14] = [{"op": "read"}] * 20 + [{"op": "read", "ms": 5700.0}]  # waited through 8-13
    figures = drawn(monkeypatch, assess(build(recorded(seconds), run_info())))
    for name in ("entities", "latency", "errors"):
        (ax,) = [ax for ax in figures[name].axes if ax.get_legend()]
        spans = [p for p in ax.patches if p.get_label() == "outage"]
        assert len(spans) == 1 and "outage" in [t.get_text() for t in ax.get_legend().get_texts()], name
        span = spans[0]  # a rectangle over the outage's seconds, from the first to the end of the last
        assert (span.get_x(), span.get_x() + span.get_width()) == (8, 14), name
    quiet = drawn(monkeypatch, assess(build(recorded({t: [{"op": "read"}] * 20 for t in range(20)}), run_info())))
    assert not [p for ax in quiet["entities"].axes for p in ax.patches if p.get_label() == "outage"]


def test_the_peak_charts_captions_name_the_window_each_run_averaged_over(monkeypatch):
    """The issue: a 15-s comparison's findings said "5-s average" while its chart said "10-second moving average"."""
    from matplotlib.axes import Axes

    from loadtest.report.charts import partition_peaks, strategy_peaks
    from loadtest.results.comparison import Comparison, StrategyOutcome

    captions: list[str] = []
    monkeypatch.setattr(Axes, "set_xlabel", lambda self, label, *a, **k: captions.append(label))
    results = assess(build(recorded({t: [{"entities": 5}] for t in range(15)}, steady_from=10), run_info()))
    level = next(f for f in results.findings if f.kind in ("HOT", "WARM", "COOL"))
    assert results.run.peak_window_s == 5 and "(5-second moving average)" in level.message
    partition_peaks(results)
    outcomes = [StrategyOutcome(strategy=name, run_dir="", exit_code=0, hottest_peak_eps=5.0, peak_window_s=5) for name in "ab"]
    strategy_peaks(Comparison(strategies=outcomes, partition_target=2000, settings={}))
    assert captions == [
        "peak entities/s (5-second moving average)",
        "hottest partition's peak entities/s (5-second moving average)",
    ]


def test_scans_that_ran_out_of_seeded_rows_say_why_in_the_note(azurite, tmp_path):
    """Issue #64: --seed-entities 1000 over set:20 leaves 50 rows under each key, so every 100-row scan reads 50;
    the report's note says so and what to seed. Seeded as asked (2,000), the note says nothing of it."""
    for seeded, short in ((1000, True), (2000, False)):
        out = tmp_path / str(seeded)
        done = run_loadtest(
            "run", "-t", "3s", "-u", "2", "-r", "2", "--rate", "5", "--key-strategy", "set:20", "--mix", "read=50,scan=50",
            "--seed-entities", str(seeded), "--out", str(out), "--connection-string", azurite.connection_string,
        )  # fmt: skip
        assert done.code == 0, done.output
        results = json.loads((out / "results.json").read_text())
        (scans,) = [n for n in results["workload"]["names"] if n["op"] == "scan"]
        note = html.unescape(re.search(r'<p class="note" id="what-ran">(.*?)</p>', (out / "report.html").read_text(), re.S)[1])
        if short:
            assert scans["returned"] <= 50 * scans["requests"], scans  # the rows under each key ran out
            assert (
                "asked for 100 rows each and returned" in note and "--seed-entities 1,000 is spread over the design's 20" in note
            ), note
            assert "(50 rows under each)" in note and "seed 2,000 (100 under each) to scan as asked" in note, note
        else:
            assert scans["returned"] == 100 * scans["requests"], scans
            assert "scans asked" not in note and "ran out of rows" not in note, note
