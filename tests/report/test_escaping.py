"""Strings from input are text on every page the tool writes: Jinja's autoescape on report.html and comparison.html
(report.html's keys in Chromium: ``test_locust_ui``, whose run's PartitionKeys carry markup)."""

from __future__ import annotations

from markupsafe import escape

from loadtest.report import render_comparison
from loadtest.results.comparison import Comparison, StrategyOutcome

MARKUP = '"><img src=x onerror=window.__pwned=1>&amp;<script>window.__pwned=2</script>'


def test_comparison_html_shows_every_string_from_input_as_text(tmp_path):
    outcome = StrategyOutcome(
        strategy=f"template:{{p:4}}{MARKUP}",
        run_dir=str(tmp_path / "template-p-4-img"),
        exit_code=0,
        hottest_partition=f"p0{MARKUP}",
        findings=["HOT"],
        inferred=MARKUP,
    )
    comparison = Comparison(
        strategies=[outcome], partition_target=20, settings={"partition_key": MARKUP}, ranking=[outcome.strategy]
    )
    comparison.recommendation = f"use {MARKUP}"
    page = render_comparison(comparison, tmp_path).read_text()
    assert "<img src=x" not in page and "<script>window" not in page
    assert page.count(str(escape(MARKUP))) >= 6  # strategy (cell, attribute, ranking), key, setting, recommendation
