"""The report's first words: one sentence per partition design, read from the assessed results.

The hottest partition's peak against its target, the sustained ceiling when one was searched, and what besides
the design bounded the figures (the emulator, the generator, a lost target or worker), so the page leads with the
verdict and the findings follow as its evidence.
"""

from __future__ import annotations

from ..ceiling.limits import LIMITS
from ..operations import OpClass
from ..results import FindingKind, Results

__all__ = ["verdict_sentences"]

K = FindingKind
#: Findings that bound the figures, in words (the figures are then lower bounds, or lack seconds).
BOUNDS = {
    K.EMULATOR_BOUND: "the emulator's own capacity",
    K.GENERATOR_BOUND: "the load generator's CPU",
    K.TARGET_LOST: "a target that stopped answering",
    K.WORKER_LOST: "a lost Locust worker",
    K.INCOMPLETE: "a step after the load that failed",
    K.UNSENT: "the share of its schedule the generator could send",
}


def _design(results: Results) -> str:
    settings = results.run.settings
    strategy = str(settings.get("key_strategy", "single"))
    simulated = f"Simulated at {float(settings.get('arrival_rate', 0)):,.0f} operations/s, k" if results.run.simulated else "K"
    if strategy == "single":
        return f"{simulated}ey design single (PartitionKey {settings.get('partition_key', '')!r})"
    return f"{simulated}ey design {strategy} (about {results.keys.get('distinct', 0):,} PartitionKeys touched)"


def _peak(results: Results) -> str:
    partition = results.hottest()[0]
    row = results.headline(partition)
    what = "GET and PUT together" if row.op_class == OpClass.ALL else row.op_class
    if results.open_loop:  # judged on its demand: the design's question
        return (
            f"the hottest partition {partition!r} was asked for {row.offered_peak_eps:,.0f} entities/s at peak ({what}), "
            f"{row.offered_ratio:.0%} of the {row.target:,}/s per-partition target ({row.finding}), and served "
            f"{row.peak_eps:,.0f}/s"
        )
    return (
        f"the hottest partition {partition!r} peaked at {row.peak_eps:,.0f} entities/s ({what}), "
        f"{row.ratio:.0%} of the {row.target:,}/s per-partition target ({row.finding})"
    )


def _ceiling(results: Results) -> str:
    search = results.ceiling
    ceiling, limit = search["ceiling"], search["limited_by"]
    if ceiling is None:
        return "the ceiling search gave way at its first step"
    if not limit:
        return f"the ceiling search held every step, up to {ceiling['entities_per_s']:,.0f} entities/s: the ceiling is higher"
    return f"it sustained {ceiling['entities_per_s']:,.0f} entities/s before {limit} limited it"


def verdict_sentences(results: Results) -> list[str]:
    """One sentence for the run's partition design (the report's verdict)."""
    if not results.hottest():
        return ["No table operations were recorded: there is nothing to judge."]
    parts = [_peak(results)]
    if results.engines:
        names = ", ".join(e["engine"] for e in results.engines)
        parts.append(f"the load of {len(results.engines)} engines ({names}) merged and judged together")
    if results.ceiling:
        parts.append(_ceiling(results))
    kinds = {f.kind for f in results.findings}
    limit = LIMITS.get(results.ceiling.get("limited_by", ""))
    kinds |= {limit} if limit in BOUNDS else set()  # the search's own limit, where it bounds the figures
    bounds = [words for kind, words in BOUNDS.items() if kind in kinds]
    if results.run.simulated:
        parts.append("simulated by the partition layer's model with the budgets given, not measured")
    elif bounds:
        parts.append(f"bounded by {' and '.join(bounds)}, so these figures are lower bounds")
    elif results.run.settings.get("emulate_throttling"):
        budget = float(results.run.settings.get("emulator_partition_rate", 0))
        parts.append(f"measured against the throttling emulator's {budget:,.0f} entities/s per partition, not Azure's")
    elif results.run.emulator:
        parts.append("measured on an emulator: Azure's own partition servers may serve more")
    return [f"{_design(results)}: {'; '.join(parts)}."]
