"""The key heat map, Key Visualizer-style: the busiest partitions and the untracked keys' ranges down, time across,
each cell's entities/s as a share of the per-partition target."""

from __future__ import annotations

import pandas as pd
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize

from ..counting.buckets import GROUPS
from ..results.form import Results
from ..results.rolled_frame import BIN_COLUMN
from .canvas import figure, image, per_second, text
from .time_axis import bin_words, binned, first_epoch, utc_axis

__all__ = ["heat_map"]


def heat_map(results: Results, frame: pd.DataFrame, rows: int = 20, ranges: int = 16, *, row: int = 1) -> str:
    """Key Visualizer-style: time across, partitions down, colour = share of the per-partition target.

    First the busiest tracked partitions (exact counts), then the untracked keys in key-range
    buckets by their first character, in key order: the way range partitions group them. ``frame``'s counters are
    per second (a long span's: each bin's mean, its rows ``row`` seconds; the key ranges are given per bin, and
    divided by it here).
    """
    target = results.run.partition_target
    table = pd.DataFrame()
    if not frame.empty:
        table = per_second(frame, "entities", "partition")
        table = table.drop(columns=list(GROUPS), errors="ignore")
        table = table[[p for p in results.hottest(rows) if p in table.columns]]
    if results.key_ranges:
        spans = pd.DataFrame(results.key_ranges).pivot_table(
            index="t", columns="range", values="entities", aggfunc="sum", fill_value=0
        )
        if row > 1:  # each bin's entities as its mean per second (its length from the series: the span cuts the edges)
            lengths = frame.groupby("t")[BIN_COLUMN].max()
            spans = spans.div(lengths.reindex(spans.index).fillna(row), axis=0)
        spans = spans[sorted(spans.columns)]
        if len(spans.columns) > ranges:  # adjacent ranges together, still in key order
            size = -(-len(spans.columns) // ranges)
            groups = [list(spans.columns[i : i + size]) for i in range(0, len(spans.columns), size)]
            spans = pd.DataFrame({f"{g[0]}…{g[-1]}": spans[g].sum(axis=1) for g in groups})
        spans.columns = [f"keys '{c}…' (untracked)" if len(str(c)) == 1 else f"keys '{c}' (untracked)" for c in spans.columns]
        table = table.join(spans, how="outer").fillna(0) if not table.empty else spans
    fig, ax = figure((9, 0.28 * (len(table.columns) + 1) + 1.6))
    size = 1  # seconds a column holds
    if not table.empty:
        table, size = binned(table)  # a bin's busiest second, a bin without rows 0
        extent = (-0.5, table.index[-1] + size - 0.5, len(table.columns) - 0.5, -0.5)  # x: seconds since start
        shares = (table / target).T.to_numpy()
        scale = ScalarMappable(Normalize(0, 2.0), "inferno")
        # coloured here, one byte a channel: matplotlib scales an RGBA image to the page as it is, where a map of
        # figures went through floating-point images of the page's size (35 MB for ten minutes' map)
        ax.imshow(scale.to_rgba(shares, bytes=True), aspect="auto", interpolation="nearest", extent=extent)
        ax.set_yticks(range(len(table.columns)), [text(str(c)[:34]) for c in table.columns], fontsize=7)
        bar = fig.colorbar(scale, ax=ax)
        bar.set_label("× target", fontsize=8)  # short: it stands beside a map that may be one row tall
        utc_axis(ax, first_epoch(frame), table.index[-1] + size)
    ax.set_xlabel("seconds since start" + bin_words(size, row, mark="column"))
    ax.set_title(
        "Key heat map: entities/s per partition (and per key range) as a share of the per-partition target\n"
        "(1.0 = the target; 2x and above: brightest)",
        fontsize=10,
    )
    return image(fig)
