"""Time on the report's charts: seconds since the start below, the wall-clock time in UTC above once a run is long
(the time Azure's metrics and logs are in), and a heat map's seconds in bins that fit the page.

A run of a minute draws a column a second; a soak of a day, or a day of production logs, would draw 86,400 columns
into some 800 pixels, and the picture would show whichever second each pixel happened to sample. Binned, each column
is the busiest second of its bin: a hot second stays as hot as it was.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from ..wall_clock import UTC_FROM_S, clock_form, first_epoch

__all__ = ["HEAT_MAP_COLUMNS", "UTC_FROM_S", "binned", "first_epoch", "utc_axis"]

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


def binned(table: pd.DataFrame, columns: int = HEAT_MAP_COLUMNS) -> tuple[pd.DataFrame, int]:
    """Seconds down (index 0…n, every second present) into at most ``columns`` bins of whole seconds, each bin the
    busiest second of each column; and the seconds a bin holds (1: the table as it was)."""
    size = -(-len(table.index) // columns) if len(table.index) > columns else 1
    if size == 1:
        return table, 1
    bins = table.groupby(table.index // size).max()
    bins.index = bins.index * size
    return bins, size
