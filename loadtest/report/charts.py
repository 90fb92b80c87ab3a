"""The report's charts, drawn with pandas and matplotlib from the results' time series.

Each chart is returned as a PNG data URI so that report.html stays one self-contained file.
"""

from __future__ import annotations

import base64
import io
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from ..buckets import GROUPS
from ..findings.levels import level
from ..findings.outages import outages
from ..phases import peak_words
from ..results import PEAK_WINDOW_S, Results
from .badges import colour
from .time_axis import binned, first_epoch, utc_axis

# matplotlib tries each category label as a date: a timestamp key beside its op class ("202611231156 PUT") reads as
# a date in an unknown time zone, and dateutil warns; the labels are categories, so the warning says nothing
warnings.filterwarnings("ignore", message="tzname .* identified but not understood")

if TYPE_CHECKING:
    from ..compare import Comparison

__all__ = ["all_charts", "timeseries_frame"]

COLORS = {"GET": "#1f77b4", "PUT": "#ff7f0e", "ALL": "#555555"}


def timeseries_frame(results: Results) -> pd.DataFrame:
    """One row per second x partition x op class (``series_frame``'s columns)."""
    return results.timeseries


def _figure(figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """A figure on the Agg canvas and its axes: headless, and without pyplot's figure manager (nothing to close).

    Constrained layout makes room for the legend beside the axes as it draws; ``bbox_inches="tight"`` would draw
    every chart twice to find that room (a quarter of a report's rendering time)."""
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _legend_beside(ax: Axes, handles: list | None = None, labels: list | None = None) -> None:
    """The legend right of the axes, never over the data (the layout narrows the axes to hold it)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)


def _time_axes(fig: Figure, ax: Axes, title: str, ylabel: str = "", frame: pd.DataFrame | None = None) -> str:
    """The finish every over-time chart shares: labels (a long run: UTC along the top), zero-based y, legend, grid; then
    the PNG."""
    if frame is not None and not frame.empty:
        utc_axis(ax, first_epoch(frame), frame["t"].max())
    ax.set_xlabel("seconds since start")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    _legend_beside(ax)
    ax.grid(alpha=0.3)
    return _png(fig)


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


def _per_second(frame: pd.DataFrame, value: str, by: str) -> pd.DataFrame:
    """Seconds down (0 to the last), one column per ``by`` value (in order); seconds with no requests are zero. Summed
    into one array (pandas' pivot_table held 40 MB for ten minutes over 50 keys, the report's peak)."""
    frame = frame[frame["t"] >= 0]
    if frame.empty:
        return pd.DataFrame(index=range(0))
    codes, names = pd.factorize(frame[by], sort=True)
    seconds, values = frame["t"].to_numpy(np.int64), frame[value].to_numpy()
    table = np.zeros((int(seconds.max()) + 1, len(names)), dtype=values.dtype)
    np.add.at(table, (seconds, codes), values)
    return pd.DataFrame(table, columns=pd.Index(names, name=by))


def entities_over_time(results: Results, frame: pd.DataFrame, spans: Sequence[tuple[int, int]] = ()) -> str:
    fig, ax = _figure((9, 3.6))
    if not frame.empty:
        table = _per_second(frame, "entities", "op_class")
        for op_class in table.columns:
            ax.plot(table.index, table[op_class], label=f"{op_class} entities/s", color=COLORS.get(op_class))
        if len(table.columns) > 1:
            ax.plot(table.index, table.sum(axis=1), label="GET+PUT", color=COLORS["ALL"], linestyle=":")
        if results.open_loop:  # the demand, sent or not, beside what was served
            asked = _per_second(frame.assign(demand=frame["offered"] + frame["unsent"]), "demand", "op_class").sum(axis=1)
            ax.plot(asked.index, asked, label="demand (GET+PUT)", color="#888888", linestyle="--")
    target = results.run.partition_target
    ax.axhline(target, color="red", linestyle="--", label=f"partition target {target:,}/s")
    if results.run.steady_from_s:
        ax.axvline(results.run.steady_from_s, color="grey", linewidth=0.8, label="steady phase from")
    _mark_outages(ax, spans)
    return _time_axes(fig, ax, "Entities per second (all partitions) against the per-partition target", "entities / s", frame)


def partition_peaks(results: Results) -> str:
    rows = [r for r in results.hottest_rows() if r.partition not in GROUPS]
    fig, ax = _figure((9, max(2.0, 0.45 * len(rows) + 1.2)))
    labels = [f"{r.partition} {r.op_class}" for r in rows]
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
    _legend_beside(ax)
    ax.grid(alpha=0.3, axis="x")
    return _png(fig)


def latency_over_time(frame: pd.DataFrame, spans: Sequence[tuple[int, int]] = ()) -> str:
    fig, ax = _figure((9, 3.6))
    if not frame.empty:
        for op_class, group in frame.groupby("op_class"):
            seconds, at = np.unique(group["t"].to_numpy(np.int64), return_inverse=True)  # the seconds it had, each once
            color = COLORS.get(str(op_class))
            for name, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
                worst = np.zeros(len(seconds))  # each second's percentile: every partition's row holds the second's
                np.maximum.at(worst, at, group[f"{name}_ms"].to_numpy(np.float64))
                ax.plot(seconds, worst, color=color, linestyle=style, label=f"{op_class} {name}")
    _mark_outages(ax, spans)
    return _time_axes(fig, ax, "Latency percentiles per second (HDR histogram)", "ms", frame)


def errors_and_attempts(frame: pd.DataFrame, spans: Sequence[tuple[int, int]] = ()) -> str:
    fig, ax = _figure((9, 3.2))
    if not frame.empty:
        per_second = frame.groupby("t")[["requests", "attempts", "failures", "throttled"]].sum()
        per_second = per_second.reindex(range(0, int(frame["t"].max()) + 1), fill_value=0)
        ax.plot(per_second.index, per_second["requests"], label="operations/s", color="#2ca02c")
        ax.plot(per_second.index, per_second["attempts"], label="attempts/s (retries included)", color="#9467bd", linestyle="--")
        edges = np.arange(len(per_second) + 1) - 0.5  # one filled outline per series, not an artist per second
        ax.stairs(per_second["failures"], edges, fill=True, label="failed operations/s", color="#d62728", alpha=0.6)
        ax.stairs(per_second["throttled"], edges, fill=True, label="throttled attempts/s", color="#8c564b", alpha=0.6)
    _mark_outages(ax, spans)
    return _time_axes(fig, ax, "Operations, attempts and errors per second", frame=frame)


def strategy_peaks(comparison: Comparison) -> str:
    """Each strategy's hottest partition against the target, best first."""
    order = {name: i for i, name in enumerate(comparison.ranking)}
    outcomes = sorted(comparison.strategies, key=lambda o: order.get(o.strategy, len(order)))
    fig, ax = _figure((9, max(2.0, 0.5 * len(outcomes) + 1.2)))
    colors = [colour(level(o.ratio)) for o in outcomes]  # each bar its level's badge colour
    ax.barh([o.strategy for o in outcomes], [o.hottest_peak_eps for o in outcomes], color=colors)
    ax.axvline(comparison.partition_target, color="red", linestyle="--", label=f"target {comparison.partition_target:,}/s")
    for i, o in enumerate(outcomes):
        label = f" {o.hottest_peak_eps:,.0f}/s ({o.ratio:.0%}), {o.partitions:,} keys"
        ax.text(o.hottest_peak_eps, i, label, va="center", fontsize=8)
    windows = [o.peak_window_s for o in outcomes if o.peak_window_s] or [PEAK_WINDOW_S]  # each run's own window
    ax.set_xlabel(f"hottest partition's peak entities/s ({peak_words(*windows)})")
    ax.set_title("Hottest partition per strategy (best first)")
    ax.invert_yaxis()
    _legend_beside(ax)
    ax.grid(alpha=0.3, axis="x")
    return _png(fig)


def heat_map(results: Results, frame: pd.DataFrame, rows: int = 20, ranges: int = 16) -> str:
    """Key Visualizer-style: time across, partitions down, colour = share of the per-partition target.

    First the busiest tracked partitions (exact counts), then the untracked keys in key-range
    buckets by their first character, in key order: the way range partitions group them.
    """
    target = results.run.partition_target
    table = pd.DataFrame()
    if not frame.empty:
        table = _per_second(frame, "entities", "partition")
        table = table.drop(columns=list(GROUPS), errors="ignore")
        table = table[[p for p in results.hottest(rows) if p in table.columns]]
    if results.key_ranges:
        spans = pd.DataFrame(results.key_ranges).pivot_table(
            index="t", columns="range", values="entities", aggfunc="sum", fill_value=0
        )
        spans = spans[sorted(spans.columns)]
        if len(spans.columns) > ranges:  # adjacent ranges together, still in key order
            size = -(-len(spans.columns) // ranges)
            groups = [list(spans.columns[i : i + size]) for i in range(0, len(spans.columns), size)]
            spans = pd.DataFrame({f"{g[0]}…{g[-1]}": spans[g].sum(axis=1) for g in groups})
        spans.columns = [f"keys '{c}…' (untracked)" if len(str(c)) == 1 else f"keys '{c}' (untracked)" for c in spans.columns]
        table = table.join(spans, how="outer").fillna(0) if not table.empty else spans
    fig, ax = _figure((9, 0.28 * (len(table.columns) + 1) + 1.6))
    size = 1  # seconds a column holds
    if not table.empty:
        table, size = binned(table.reindex(range(0, int(table.index.max()) + 1), fill_value=0))  # a bin's busiest second
        extent = (-0.5, table.index[-1] + size - 0.5, len(table.columns) - 0.5, -0.5)  # x: seconds since start
        shares = (table / target).T.to_numpy()
        scale = ScalarMappable(Normalize(0, 2.0), "inferno")
        # coloured here, one byte a channel: matplotlib scales an RGBA image to the page as it is, where a map of
        # figures went through floating-point images of the page's size (35 MB for ten minutes' map)
        ax.imshow(scale.to_rgba(shares, bytes=True), aspect="auto", interpolation="nearest", extent=extent)
        ax.set_yticks(range(len(table.columns)), [str(c)[:34] for c in table.columns], fontsize=7)
        bar = fig.colorbar(scale, ax=ax)
        bar.set_label("× target", fontsize=8)  # short: it stands beside a map that may be one row tall
        utc_axis(ax, first_epoch(frame), table.index[-1] + size)
    ax.set_xlabel("seconds since start" + (f" (a column: the busiest second of {size} s)" if size > 1 else ""))
    ax.set_title(
        "Key heat map: entities/s per partition (and per key range) as a share of the per-partition target\n"
        "(1.0 = the target; 2x and above: brightest)",
        fontsize=10,
    )
    return _png(fig)


def ceiling_steps(results: Results) -> str:
    """The ceiling search per step: offered vs served operations/s and served entities/s against the target, and the
    p99s on their own axis; the ceiling and the step that gave way marked."""
    search = results.ceiling
    steps = search["steps"]
    offered = [s["offered_per_s"] for s in steps]
    fig, ax = _figure((9, 4))
    ax.plot(offered, offered, color="#888888", linestyle=":", marker=".", label="offered operations/s")
    ax.plot(offered, [s["served_per_s"] for s in steps], color="#2ca02c", marker="o", label="served operations/s")
    ax.plot(offered, [s["entities_per_s"] for s in steps], color=COLORS["ALL"], marker="s", label="served entities/s")
    target, top = results.run.partition_target, 1.25 * max([*offered, *(s["entities_per_s"] for s in steps), 1])
    above = target > top  # far above what the steps reached: named, not drawn, so the steps stay readable
    ax.axhline(
        target, color="red", linestyle="--", label=f"partition target {target:,} entities/s" + (" (above)" if above else "")
    )
    if search["ceiling"]:
        best = search["ceiling"]
        ax.plot(
            [best["offered_per_s"]],
            [best["entities_per_s"]],
            "*",
            color="#1b5e20",
            markersize=16,
            label=f"ceiling {best['entities_per_s']:,.0f} entities/s",
        )
    bad = [s for s in steps if not s["good"]]
    if bad:
        ax.plot(
            [bad[0]["offered_per_s"]],
            [bad[0]["served_per_s"]],
            "X",
            color="#c62828",
            markersize=12,
            label=f"gave way: {search['limited_by']}",
        )
    ax.set_xlabel("offered operations/s (each step)")
    ax.set_ylabel("per second")
    ax.set_ylim(0, top if above else None)
    ax.grid(alpha=0.3)
    latency = ax.twinx()
    latency.plot(offered, [s["p99_ms"] for s in steps], color="#9467bd", linestyle="--", label="p99 ms (service time)")
    latency.plot(offered, [s["corrected_p99_ms"] for s in steps], color="#9467bd", label="corrected p99 ms")
    latency.axhline(search["plan"]["max_p99_ms"], color="#9467bd", linestyle=":", linewidth=0.8, label="--max-p99")
    latency.set_ylabel("ms")
    latency.set_ylim(bottom=0)
    handles, labels = ax.get_legend_handles_labels()
    more, names = latency.get_legend_handles_labels()
    latency.legend(handles + more, labels + names, loc="upper left", bbox_to_anchor=(1.1, 1.0), borderaxespad=0.0, fontsize=8)
    ax.set_title("Ceiling search: offered vs served per step, with the p99s")
    return _png(fig)


def all_charts(results: Results) -> dict[str, str]:
    frame, spans = timeseries_frame(results), _outage_spans(results)
    return {
        **({"ceiling": ceiling_steps(results)} if results.ceiling.get("steps") else {}),
        "entities": entities_over_time(results, frame, spans),
        "peaks": partition_peaks(results),
        "latency": "" if results.run.simulated else latency_over_time(frame, spans),  # a simulation times nothing
        "errors": errors_and_attempts(frame, spans),
        "heat": heat_map(results, frame),
    }
