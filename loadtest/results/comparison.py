"""A comparison of PartitionKey strategies (``loadtest compare``'s result): each strategy's line read from its run's
results.json, and the ranking. What comparison.json and the comparison page render from.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..outputs import RESULTS_FILE, strict_json
from .form import Results

__all__ = ["INFERRED", "Comparison", "StrategyOutcome", "rank", "summarise"]

#: What the docs say that Azurite alone cannot show: it has no range partitions (the throttling emulator serves the range
#: where new keys land as one, unless it gives per-key budgets only: then the figure is measured, not inferred).
INFERRED = {
    "append-only": "Inferred from the docs, not measured: append-only keys always insert into the last range "
    "partition, so one partition server takes every insert however many keys there are.",
    "prepend-only": "Inferred from the docs, not measured: prepend-only keys always insert into the first range "
    "partition, so one partition server takes every insert however many keys there are.",
    "timestamp": "Inferred from the docs, not measured: time-ordered keys put the current period's inserts on one "
    "range partition; seconds-first formats (ssyyyyMMdd…) spread them over 60.",
}


@dataclass(kw_only=True)
class StrategyOutcome:
    strategy: str
    run_dir: str
    exit_code: int
    hottest_partition: str = ""
    hottest_peak_eps: float = 0.0
    ratio: float = 0.0
    partitions: int = 0
    top1_share: float = 0.0
    top10_share: float = 0.0
    entities: int = 0
    findings: list[str] = field(default_factory=list)
    inferred: str = ""
    peak_window_s: int = 0  # the seconds its peaks averaged (its run's steady phase, when shorter than 10)


@dataclass(kw_only=True)
class Comparison:
    strategies: list[StrategyOutcome]
    partition_target: int
    settings: dict[str, Any]
    ranking: list[str] = field(default_factory=list)
    recommendation: str = ""
    simulated: bool = False  # ``compare --simulate``: the partition layer's model ran each strategy, nothing was sent

    def to_json(self) -> str:
        return strict_json(asdict(self), root="comparison")[0]  # its figures come from results read strictly


def summarise(spec: str, run_dir: Path, exit_code: int) -> StrategyOutcome:
    """One strategy's line of the comparison, from its results.json."""
    outcome = StrategyOutcome(strategy=spec, run_dir=str(run_dir), exit_code=exit_code)
    path = run_dir / RESULTS_FILE
    if not path.exists():
        return outcome
    results = Results.load_file(path)
    recorded = results.run.recorded
    if not recorded.emulate_throttling or recorded.emulator_per_key_only:  # else the range was served as one: measured
        outcome.inferred = INFERRED.get(spec.partition(":")[0], "")
    hottest = results.hottest()
    if hottest:
        row = results.headline(hottest[0])
        outcome.hottest_partition = row.partition
        outcome.hottest_peak_eps, outcome.ratio = row.judged(results.open_loop)  # an open loop's (a simulation's): demand
        outcome.peak_window_s = results.run.peak_window_s
    outcome.partitions = int(results.keys.get("distinct", len(results.peaks())))
    outcome.top1_share = results.keys.get("top1_share", 0.0)
    outcome.top10_share = results.keys.get("top10_share", 0.0)
    outcome.entities = results.account.entities
    outcome.findings = list(dict.fromkeys(f.kind for f in results.findings))  # in the one order, heaviest first
    return outcome


def rank(outcomes: list[StrategyOutcome]) -> tuple[list[str], str]:
    """Best first: the lowest hottest-partition ratio, then the least concentrated load."""
    done = [o for o in outcomes if o.exit_code in (0, 3) and o.entities]
    ordered = sorted(done, key=lambda o: (o.ratio, o.top1_share, o.strategy))
    if not ordered:
        return [], "No strategy completed a run: see each run's output."
    best, worst = ordered[0], ordered[-1]
    text = (
        f"{best.strategy} spreads the load best: its hottest partition peaked at {best.hottest_peak_eps:,.0f} entities/s "
        f"({best.ratio:.0%} of the target) with {best.top1_share:.0%} of the entities on its busiest key"
    )
    if worst is not best:
        text += (
            f"; {worst.strategy} is the worst: {worst.hottest_peak_eps:,.0f} entities/s ({worst.ratio:.0%}) on one key "
            f"with {worst.top1_share:.0%} of the entities"
        )
    return [o.strategy for o in ordered], text + "."
