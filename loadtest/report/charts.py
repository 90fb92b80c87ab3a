"""The report's charts, drawn with pandas and matplotlib from the results' time series: each an SVG data URI
(``canvas``); the heat map and the ceiling search have modules of their own."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ..counting.buckets import COUNTERS, GROUPS
from ..counting.phases import PEAK_WINDOW_S, peak_words
from ..findings.levels import level
from ..findings.outages import outages
from ..results import series_frame
from ..results.form import Results
from ..results.rolled_frame import BIN_COLUMN
from .badges import colour
from .canvas import COLORS, figure, image, legend_beside, per_second, text, time_axes
from .ceiling_chart import ceiling_steps
from .designs_chart import designs_chart
from .heat_map import heat_map
from .time_axis import line_binned, unit_of

# matplotlib tries each category label as a date: a timestamp key beside its op class ("202611231156 PUT") reads as
# a date in an unknown time zone, and dateutil warns; the labels are categories, so the warning says nothing
warnings.filterwarnings("ignore", message="tzname .* identified but not understood")

if TYPE_CHECKING:
    from ..results.comparison import Comparison

__all__ = ["all_charts", "timeseries_frame"]


def timeseries_frame(results: Results) -> tuple[pd.DataFrame, int]:
    """One row per second x partition x op class (``series_frame``'s columns), and the seconds a row holds: a long
    span's rows are bins (``series_frame.one_width``), each counter its mean per second over the bin."""
    frame, width = series_frame.one_width(results.timeseries)
    if width > 1:
        frame = frame.assign(**{name: frame[name] / frame[BIN_COLUMN] for name in COUNTERS})
    return frame, width


def _busiest_second(results: Results) -> tuple[int, float] | None:
    """A long span's busiest second served (every partition together), from the seconds it kept: (t, entities)."""
    kept = results.timeseries[results.timeseries[BIN_COLUMN] == 1]
    if kept.empty:
        return None
    served = kept.groupby("t")["entities"].sum()
    return int(served.idxmax()), float(served.max())


def _mark_outages(ax: Axes, spans: Sequence[tuple[int, int]]) -> None:
    """Shade the seconds in which a partition (or the whole target) completed nothing (``outages``)."""
    for i, (start, end) in enumerate(spans):
        ax.axvspan(start, end + 1, color="#d62728", alpha=0.12, label="outage" if i == 0 else None)


def _outage_spans(results: Results) -> list[tuple[int, int]]:
    """The seconds of every outage, overlapping ones as one span."""
    spans: list[tuple[int, int]] = []
    for start, end in sorted((o.start, o.end) for o in outages(results)):
        if spans and start <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


def entities_over_time(results: Results, frame: pd.DataFrame, spans: Sequence[tuple[int, int]] = (), row: int = 1) -> str:
    fig, ax = figure((9, 3.6))
    size = 1  # seconds a point holds
    if not frame.empty:
        table = per_second(frame, "entities", "op_class")
        if len(table.columns) > 1:
            table["GET+PUT"] = table.sum(axis=1)
        if results.open_loop:  # the demand, sent or not, beside what was served
            asked = per_second(frame.assign(demand=frame["offered"] + frame["unsent"]), "demand", "op_class").sum(axis=1)
            table["demand (GET+PUT)"] = asked.reindex(table.index, fill_value=0)
        served = table["GET+PUT"] if "GET+PUT" in table else table.iloc[:, 0]
        busiest = (int(served.idxmax()), float(served.max())) if row == 1 else _busiest_second(results)  # before the bins
        table, size = line_binned(table)  # each point its bin's busiest second (a long span's: its busiest bin's mean)
        styles = {"GET+PUT": (COLORS["ALL"], ":"), "demand (GET+PUT)": ("#888888", "--")}
        for column in table.columns:
            color, style = styles.get(column, (COLORS.get(column), "-"))
            label = column if column in styles else f"{column} entities/s"
            ax.plot(table.index, table[column], label=label, color=color, linestyle=style)
        if max(size, row) > 1 and busiest is not None:  # a point holds many seconds: the busiest of the run at its own
            at, peak = busiest
            label = f"busiest second: {peak:,.0f}/s at {at:,} s"
            ax.plot([at], [peak], marker="o", linestyle="none", color=COLORS["ALL"], label=label)
    target = results.run.partition_target
    ax.axhline(target, color="red", linestyle="--", label=f"partition target {target:,}/s")
    if results.run.steady_from_s:
        ax.axvline(results.run.steady_from_s, color="grey", linewidth=0.8, label="steady phase from")
    _mark_outages(ax, spans)
    title = "Entities per second (all partitions) against the per-partition target"
    return time_axes(fig, ax, title, "entities / s", frame, size, row)


def partition_peaks(results: Results) -> str:
    rows = [r for r in results.hottest_rows() if r.partition not in GROUPS]
    fig, ax = figure((9, max(2.0, 0.45 * len(rows) + 1.2)))
    labels = [text(f"{r.partition} {r.op_class}") for r in rows]
    if results.open_loop:  # the demand's peak, which the finding judges, behind what was served
        ax.barh(labels, [r.offered_peak_eps for r in rows], color="#dddddd", label="demand peak")
    ax.barh(labels, [r.peak_eps for r in rows], color=[COLORS.get(r.op_class, "#888") for r in rows])
    ax.axvline(results.run.partition_target, color="red", linestyle="--", label=f"target {results.run.partition_target:,}/s")
    for i, row in enumerate(rows):
        peak, ratio = row.judged(results.open_loop)
        said = f" {peak:,.0f}/s ({ratio:.0%})" + (f", served {row.peak_eps:,.0f}/s" if results.open_loop else "")
        ax.text(peak, i, said, va="center", fontsize=8)
    ax.set_xlabel(f"peak entities/s ({peak_words(results.run.peak_window_s)})")
    ax.set_title("Each partition's peak against the target")
    ax.invert_yaxis()
    legend_beside(ax)
    ax.grid(alpha=0.3, axis="x")
    return image(fig)


def latency_over_time(frame: pd.DataFrame, spans: Sequence[tuple[int, int]] = (), row: int = 1) -> str:
    fig, ax = figure((9, 3.6))
    size = 1  # seconds a point holds
    if not frame.empty:
        for op_class, group in frame.groupby("op_class"):
            seconds, at = np.unique(group["t"].to_numpy(np.int64), return_inverse=True)  # the seconds it had, each once
            color = COLORS.get(str(op_class))
            worst = pd.DataFrame(index=pd.Index(seconds))
            for name in ("p50", "p95", "p99"):
                each = np.zeros(len(seconds))  # each second's percentile: every partition's row holds the second's
                np.maximum.at(each, at, group[f"{name}_ms"].to_numpy(np.float64))
                worst[name] = each
            worst, size = line_binned(worst, fill=False)  # a point: the slowest second of its bin (none: no point)
            for name, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
                ax.plot(worst.index, worst[name], color=color, linestyle=style, label=f"{op_class} {name}")
    _mark_outages(ax, spans)
    title = f"Latency percentiles per {'second' if row == 1 else unit_of(row)} (HDR histogram)"
    return time_axes(fig, ax, title, "ms", frame, size, row)


def errors_and_attempts(frame: pd.DataFrame, spans: Sequence[tuple[int, int]] = (), row: int = 1) -> str:
    fig, ax = figure((9, 3.2))
    size = 1  # seconds a point holds
    if not frame.empty:
        per_second = frame[frame["t"] >= 0].groupby("t")[["requests", "attempts", "failures", "throttled"]].sum()
        per_second, size = line_binned(per_second)  # each point its bin's busiest second (a second without rows: 0)
        ax.plot(per_second.index, per_second["requests"], label="operations/s", color="#2ca02c")
        ax.plot(per_second.index, per_second["attempts"], label="attempts/s (retries included)", color="#9467bd", linestyle="--")
        edges = np.append(per_second.index, per_second.index[-1] + size) - 0.5  # one filled outline a series
        ax.stairs(per_second["failures"], edges, fill=True, label="failed operations/s", color="#d62728", alpha=0.6)
        ax.stairs(per_second["throttled"], edges, fill=True, label="throttled attempts/s", color="#8c564b", alpha=0.6)
    _mark_outages(ax, spans)
    return time_axes(fig, ax, "Operations, attempts and errors per second", frame=frame, size=size, row=row)


def strategy_peaks(comparison: Comparison) -> str:
    """Each strategy's hottest partition against the target, best first."""
    order = {name: i for i, name in enumerate(comparison.ranking)}
    outcomes = sorted(comparison.strategies, key=lambda o: order.get(o.strategy, len(order)))
    fig, ax = figure((9, max(2.0, 0.5 * len(outcomes) + 1.2)))
    colors = [colour(level(o.ratio)) for o in outcomes]  # each bar its level's badge colour
    ax.barh([text(o.strategy) for o in outcomes], [o.hottest_peak_eps for o in outcomes], color=colors)
    ax.axvline(comparison.partition_target, color="red", linestyle="--", label=f"target {comparison.partition_target:,}/s")
    for i, o in enumerate(outcomes):
        label = f" {o.hottest_peak_eps:,.0f}/s ({o.ratio:.0%}), {o.partitions:,} keys"
        ax.text(o.hottest_peak_eps, i, label, va="center", fontsize=8)
    windows = [o.peak_window_s for o in outcomes if o.peak_window_s] or [PEAK_WINDOW_S]  # each run's own window
    ax.set_xlabel(f"hottest partition's peak entities/s ({peak_words(*windows)})")
    ax.set_title("Hottest partition per strategy (best first)")
    ax.invert_yaxis()
    legend_beside(ax)
    ax.grid(alpha=0.3, axis="x")
    return image(fig)


def all_charts(results: Results) -> dict[str, str]:
    (frame, row), spans = timeseries_frame(results), _outage_spans(results)
    return {
        **({"ceiling": ceiling_steps(results)} if results.ceiling.get("steps") else {}),
        **({"designs": designs_chart(results.advice)} if results.advice else {}),
        "entities": entities_over_time(results, frame, spans, row),
        "peaks": partition_peaks(results),
        "latency": "" if results.run.simulated else latency_over_time(frame, spans, row),  # a simulation times nothing
        "errors": errors_and_attempts(frame, spans, row),
        "heat": heat_map(results, frame, row=row),
    }
