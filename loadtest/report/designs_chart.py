"""``advise``'s chart: each design family's hottest partition against N, beside the target and the 80 % line."""

from __future__ import annotations

from typing import Any

from matplotlib.ticker import NullFormatter, ScalarFormatter

from .canvas import figure, image, legend_beside, text

__all__ = ["designs_chart"]


def designs_chart(advice: dict[str, Any]) -> str:
    """The hottest partition's share of its target at each N the search probed, a line per family (a point where a
    family has no N); the current design's as a dashed line; the target and the 80 % line drawn."""
    target = float(advice["partition_target"])
    fig, ax = figure((9, 4))
    current = 100 * float(advice["current"]["ratio"])
    ax.axhline(current, color="#888888", linestyle=":", label=f"as it is: {current:,.0f} %")
    ax.axhline(100, color="red", linestyle="--", label=f"target {target:,.0f} entities/s")
    ax.axhline(100 * float(advice["headroom"]), color="#ff7f0e", linestyle="--", label=f"{float(advice['headroom']):.0%} of it")
    top = 110.0
    styles = iter([("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"), ("v", "-"), ("P", "--")])
    for design in advice["designs"]:
        curve = design.get("curve") or []
        if not curve or design["family"] == "accounts":
            continue
        xs = [max(1, n) for n, _ in curve]
        ys = [100 * eps / target for _, eps in curve]
        top = max(top, *ys)
        chosen = " (recommended)" if design["family"] == advice.get("chosen") else ""
        marker, line = next(styles)
        ax.plot(
            xs,
            ys,
            marker=marker,
            linestyle=line if len(xs) > 1 else "none",
            markersize=6 if chosen else 11,  # the others hollow and larger: a family that matches it stays visible
            markerfacecolor=None if chosen else "none",
            zorder=3 if chosen else 2,
            label=text(f"{design['family']}{chosen}"),
        )
    ax.set_xscale("log")
    ns = sorted({max(1, n) for d in advice["designs"] if d["family"] != "accounts" for n, _ in d.get("curve") or []})
    if ns:
        ax.set_xticks(ns if len(ns) <= 12 else ns[:: -(-len(ns) // 12)])
    ax.xaxis.set_major_formatter(ScalarFormatter())  # N as numbers (2, 4, 8), not powers of ten
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yscale("log" if top > 2000 else "linear")
    ax.set_xlabel("N (buckets, prefixes, values; GUIDs and seconds-first have none)")
    ax.set_ylabel("hottest partition, % of its target")
    ax.set_title(f"The hottest partition against N, at {advice['judged_at_operations_per_s']:,.0f} operations/s")
    ax.grid(alpha=0.3)
    legend_beside(ax)
    return image(fig)
