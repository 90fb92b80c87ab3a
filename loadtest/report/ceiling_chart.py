"""The ceiling search drawn step by step: offered against served, the target, the p99s on their own axis."""

from __future__ import annotations

from ..results.form import Results
from .canvas import COLORS, figure, image, text

__all__ = ["ceiling_steps"]


def ceiling_steps(results: Results) -> str:
    """The ceiling search per step: offered vs served operations/s and served entities/s against the target, and the
    p99s on their own axis; the ceiling and the step that gave way marked."""
    search = results.ceiling
    steps = search["steps"]
    offered = [s["offered_per_s"] for s in steps]
    fig, ax = figure((9, 4))
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
            label=text(f"gave way: {search['limited_by']}"),
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
    return image(fig)
