"""Time on the report's charts: seconds since the start below, the wall-clock time in UTC above once a run is long
(the time Azure's metrics and logs are in), and a long run's seconds in bins that fit the page: a heat map's columns,
a line's points.

A run of a minute draws a column a second; a soak of a day, or a day of production logs, would draw 86,400 columns
into some 800 pixels, and the picture would show whichever second each pixel happened to sample. Binned, each column
is the busiest second of its bin: a hot second stays as hot as it was. A line over a day is drawn a point a minute,
each the busiest second of its minute, over a month a point an hour.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from ..results.wall_clock import UTC_FROM_S, clock_form, first_epoch, unit_of

__all__ = [
    "HEAT_MAP_COLUMNS",
    "LINE_POINTS",
    "UTC_FROM_S",
    "bin_words",
    "binned",
    "first_epoch",
    "line_binned",
    "unit_of",
    "utc_axis",
]

HEAT_MAP_COLUMNS = 600  # at most this many columns across: a column is at least a pixel and a half of the map


def _clock(first: float, span_s: float) -> FuncFormatter:
    """Each tick's time in UTC; none for a tick past the dates a ``datetime`` holds (a run read from a file whose
    clock ends near the year 10000)."""
    form = clock_form(span_s)

    def said(t: float, _: object) -> str:
        try:
            return datetime.fromtimestamp(first + t, UTC).strftime(form)
        except (ValueError, OverflowError, OSError):
            return ""

    return FuncFormatter(said)


def utc_axis(ax: Axes, first: float | None, span_s: float) -> None:
    """Wall-clock time in UTC along the top of ``ax``, whose x is seconds since ``first``, for a run of ``UTC_FROM_S``
    or longer (nothing if its start is unknown)."""
    if first is None or span_s < UTC_FROM_S:
        return
    top = ax.secondary_xaxis("top")
    top.xaxis.set_major_formatter(_clock(first, span_s))
    top.tick_params(labelsize=7)
    top.set_xlabel("UTC", fontsize=8)


#: The most points an over-time line longer than an hour is drawn with: a day a point a minute, a week one each 10
#: minutes (a day's 86,400 seconds drawn one by one took 5 s of one chart's drawing). Up to an hour: every second.
LINE_POINTS, WHOLE_S = 1_440, 3_600
#: The bins a line's points are whole of, in seconds: a minute, an hour, not 58 s.
_ROUND_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200, 86_400)


def binned(
    table: pd.DataFrame, columns: int = HEAT_MAP_COLUMNS, *, round_bins: bool = False, fill: bool = True
) -> tuple[pd.DataFrame, int]:
    """Seconds down (index the second since start; only those with rows, a week of logs is 604,800 seconds) into at
    most ``columns`` bins of whole seconds (``round_bins``: of a minute, an hour …), each bin the busiest second of each
    column (the values are counts: a second without a row is 0, and never the busiest); and the seconds a bin holds
    (1: a second a bin). ``fill``: every bin from the first to the last, 0 where no second had a row (counts; a
    latency has none)."""
    span = int(table.index.max()) + 1 if len(table.index) else 0
    size = -(-span // columns) if span > columns else 1
    if round_bins and size > 1:
        size = next((s for s in _ROUND_S if s >= size), -(-size // 86_400) * 86_400)
    if size > 1:
        table = table.groupby(table.index // size).max()
    if fill and len(table.index):
        table = table.reindex(range(min(0, int(table.index.min())), int(table.index.max()) + 1), fill_value=0)
    if size > 1:
        table.index = table.index * size
    return table, size


def line_binned(table: pd.DataFrame, *, fill: bool = True) -> tuple[pd.DataFrame, int]:
    """A line's seconds as it is drawn: every one up to an hour, else ``LINE_POINTS`` round bins at most."""
    if len(table.index) and int(table.index.max()) + 1 > WHOLE_S:
        return binned(table, LINE_POINTS, round_bins=True, fill=fill)
    return binned(table, max(1, int(table.index.max()) + 1) if len(table.index) else 1, fill=fill)


def bin_words(size: int, row: int = 1, mark: str = "point") -> str:
    """What a ``mark`` of a binned chart is (a line's point, a heat map's column), as the axis says it (``row``: the
    seconds a row of the series holds, a long span's bins)."""
    if row > 1:
        if size <= row:
            return f" (a {mark}: each {unit_of(row)}'s mean)"
        return f" (a {mark}: the busiest {unit_of(row)}'s mean of its {unit_of(size)})"
    if size <= 1:
        return ""
    return f" (a {mark}: the busiest second of its {unit_of(size)})"
