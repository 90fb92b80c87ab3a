"""Time on the charts: UTC along the top, and a long run's heat map and lines in bins that keep each bin's busiest
second; a day's charts drawn from a point a minute."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
from helpers import run_info
from matplotlib.figure import Figure
from synthetic import recorded
from test_report import drawn

from loadtest.report.time_axis import (
    HEAT_MAP_COLUMNS,
    LINE_POINTS,
    UTC_FROM_S,
    WHOLE_S,
    bin_words,
    binned,
    first_epoch,
    line_binned,
    utc_axis,
)
from loadtest.results.summary import build


def test_a_days_seconds_fit_the_page_and_a_single_hot_second_stays_as_hot():
    seconds = 86_400
    table = pd.DataFrame({"a": np.ones(seconds), "b": np.zeros(seconds)}, index=range(seconds))
    table.loc[50_001, "a"] = 4_321.0  # one second in the day
    bins, size = binned(table)
    assert len(bins) <= HEAT_MAP_COLUMNS and size == 144 and list(bins.index[:3]) == [0, 144, 288]
    assert bins["a"].max() == 4_321.0 and bins.loc[50_001 - 50_001 % 144, "a"] == 4_321.0
    assert (bins["a"] == 1.0).sum() == len(bins) - 1 and (bins["b"] == 0.0).all()


def test_a_short_run_keeps_a_column_a_second():
    table = pd.DataFrame({"a": range(90)})
    bins, size = binned(table)
    assert size == 1 and bins.equals(table)


def test_a_line_keeps_every_second_of_an_hour_and_a_day_a_point_a_minute_each_its_busiest_second():
    hour = pd.DataFrame({"a": np.arange(WHOLE_S, dtype=float)})
    assert line_binned(hour)[1] == 1
    for seconds, size, words in ((86_400, 60, "minute"), (7 * 86_400, 600, "10 minutes"), (30 * 86_400, 1_800, "30 minutes")):
        table = pd.DataFrame({"a": np.ones(seconds)})
        table.loc[seconds // 3 + 7, "a"] = 99.0
        bins, got = line_binned(table)
        assert (got, len(bins)) == (size, -(-seconds // size)) and len(bins) <= LINE_POINTS
        assert bins.loc[(seconds // 3 + 7) // size * size, "a"] == 99.0 and (bins["a"] == 1.0).sum() == len(bins) - 1
        assert bin_words(got) == f" (a point: the busiest second of its {words})"


def test_a_days_report_draws_each_line_from_a_point_a_minute(monkeypatch):
    """A day's series, every chart's every line: at most a point a minute (drawn second by second, 86,400 points took
    5 s of one chart)."""
    results = build(recorded({0: [{"op": "read", "entities": 3}]}), run_info())
    day = 86_400
    frame = results.timeseries.iloc[np.zeros(day, dtype=int)].reset_index(drop=True)  # its one second, a day of them
    frame["t"], frame["second"] = np.arange(day), frame["second"] + np.arange(day)
    frame.loc[50_001, "entities"] = 900  # one hot second in the day
    results.timeseries = frame
    figures = drawn(monkeypatch, results)
    for name in ("entities", "latency", "errors"):
        lines = figures[name].axes[0].get_lines()
        longest = max(len(line.get_xdata()) for line in lines)
        assert 1 < longest <= day // 60 + 1, (name, longest)
        assert "the busiest second of its minute" in figures[name].axes[0].get_xlabel()
    marked = [text.get_text() for text in figures["entities"].axes[0].get_legend().get_texts()]
    assert "busiest second: 900/s at 50,001 s" in marked, marked  # marked at its own second, not its minute's


def test_the_top_axis_reads_the_wall_clock_in_utc():
    first = datetime(2026, 11, 24, 14, 2, 0, tzinfo=UTC).timestamp()
    frame = pd.DataFrame({"t": [0, 1], "second": [int(first), int(first) + 1]})
    assert first_epoch(frame) == first and first_epoch(pd.DataFrame({"t": [0]})) is None
    for span, at, says in ((UTC_FROM_S, 75, "14:03:15"), (7_200, 3_600, "15:02"), (3 * 86_400, 86_400, "11-25 14:02")):
        fig = Figure()
        ax = fig.subplots()
        utc_axis(ax, first, span)
        (top,) = ax.child_axes
        assert top.xaxis.get_major_formatter()(at, 0) == says and top.get_xlabel() == "UTC"
    short = Figure().subplots()
    utc_axis(short, first, UTC_FROM_S - 1)  # a short run: seconds since its start alone
    assert short.child_axes == []
