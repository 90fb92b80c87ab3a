"""Time on the charts: UTC along the top, and a long run's heat map in bins that keep each bin's busiest second."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from loadtest.report.time_axis import HEAT_MAP_COLUMNS, UTC_FROM_S, binned, first_epoch, utc_axis


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
