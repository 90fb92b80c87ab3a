"""The ceiling search's plan and its judgement: steps of offered load, what each step served, the first step that
gave way, and what limited it. Pure: the shape (``ceiling_shape``) runs the steps, ``summary`` records the search.

A step is *good* while it serves at least ``MIN_SERVED_SHARE`` of the operations offered, throttles at most
``MAX_THROTTLED_SHARE`` of its attempts, fails at most ``MAX_ERROR_SHARE`` of its operations otherwise, and keeps
its corrected p99 (completion - when each operation was due) at or under ``--max-p99``. The sustained ceiling is
the last good step's served entities/s, per partition and op class.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from statistics import mean
from typing import Any

from hdrh.histogram import HdrHistogram

from .errors import THROTTLING_CODES, UsageError
from .limits import GENERATOR_CPU_PERCENT
from .metrics import Bucket, BucketKey, PartitionMetrics, new_histogram
from .options import CEILING_OPTIONS

__all__ = ["LIMITS", "Plan", "StepWindow", "judged", "search", "step_figures", "stopped_by"]

MAX_USER_RATE = 10  # operations/s one user offers: due 100 ms apart, so a user keeps pace until latency nears that
MAX_STEPS = 1000
SETTLE_S = 1.0  # a step's first second is left out of its figures: users starting, schedules finding their phase
MIN_SERVED_SHARE = 0.95
MAX_THROTTLED_SHARE = 0.01
MAX_ERROR_SHARE = 0.01
#: What can limit a search, in the order it is blamed: a step that throttled was the service's answer, whatever else.
LIMITS = ("throttling", "errors", "generator", "emulator", "latency")


@dataclass(frozen=True, kw_only=True)
class Plan:
    """Offered operations/s from ``start`` up by ``step`` to at most ``maximum``, each step ``step_s`` seconds."""

    start: int
    step: int
    maximum: int
    step_s: int
    max_p99_ms: float

    @classmethod
    def from_options(cls, options: argparse.Namespace) -> Plan:
        v = {opt.dest: opt.value(options) for opt in CEILING_OPTIONS}
        plan = cls(
            start=v["ceiling_start"],
            step=v["ceiling_step"],
            maximum=v["ceiling_max"],
            step_s=v["step_time"],
            max_p99_ms=v["max_p99"],
        )
        if plan.start > plan.maximum:
            raise UsageError(f"--ceiling-start {plan.start} is above --ceiling-max {plan.maximum}: the first step must fit")
        if plan.steps > MAX_STEPS:
            raise UsageError(
                f"--ceiling-start {plan.start} to --ceiling-max {plan.maximum} by --ceiling-step {plan.step} makes "
                f"{plan.steps:,} steps; at most {MAX_STEPS:,}: take larger steps"
            )
        return plan

    @property
    def user_rate(self) -> int:
        """Operations/s each user offers: the largest whole rate up to ``MAX_USER_RATE`` that every step's offered
        load is a multiple of, so that a step's users offer exactly its load."""
        common = math.gcd(self.start, self.step)
        return max(d for d in range(1, MAX_USER_RATE + 1) if common % d == 0)

    @property
    def steps(self) -> int:
        return (self.maximum - self.start) // self.step + 1

    def offered(self, index: int) -> int:
        return self.start + index * self.step

    def users(self, index: int) -> int:
        return self.offered(index) // self.user_rate

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "user_rate": self.user_rate, "steps": self.steps}


@dataclass(kw_only=True)
class StepWindow:
    """One step as it ran: its load, and when (epoch seconds) its users were set and the next step's were."""

    index: int
    offered: int
    users: int
    spawn_rate: float
    began: float
    ended: float | None = None

    def seconds(self) -> list[int]:
        """The whole seconds measured: after the settling second, before the step ended."""
        if self.ended is None:
            return []
        return list(range(math.ceil(self.began + SETTLE_S), math.floor(self.ended)))


def _merged(hists: Mapping[tuple[int, str], HdrHistogram], seconds: set[int]) -> HdrHistogram:
    merged = new_histogram()
    for (second, _), hist in hists.items():
        if second in seconds:
            merged.add(hist)
    return merged


def _p99(hist: HdrHistogram) -> float:
    return round(hist.get_value_at_percentile(99) / 1000.0, 2) if hist.get_total_count() else 0.0


def _cpu(samples: Mapping[int, Mapping[str, Any]], seconds: set[int]) -> float:
    """The busiest load-generating process's mean CPU % over the seconds (the master's or a worker's)."""
    series: dict[str, list[float]] = {}
    for second in seconds:
        sample = samples.get(second, {})
        if sample.get("cpu") is not None:
            series.setdefault("", []).append(sample["cpu"])
        for worker, cpu in sample.get("workers_cpu", {}).items():
            series.setdefault(worker, []).append(cpu)
    return round(max((mean(cpu) for cpu in series.values()), default=0.0), 1)


def step_figures(
    window: StepWindow,
    buckets: Mapping[BucketKey, Bucket],
    latency: Mapping[tuple[int, str], HdrHistogram],
    corrected: Mapping[tuple[int, str], HdrHistogram],
    samples: Mapping[int, Mapping[str, Any]],
    first: float,
) -> dict[str, Any]:
    """What one step offered, sent and served per second, its shares and p99s (``first``: the run's start)."""
    seconds = set(window.seconds())
    n = max(1, len(seconds))
    total, partitions = Bucket(), {}
    for (second, partition, op_class), bucket in buckets.items():
        if second in seconds:
            total.add(bucket)
            partitions.setdefault(partition, Counter())[op_class] += bucket.entities
    throttle_failures = sum(n for code, n in total.errors.items() if code in THROTTLING_CODES)
    served = (total.requests - total.failures) / n
    return {
        "step": window.index + 1,
        "offered_per_s": window.offered,
        "users": window.users,
        "from_s": round(window.began - first, 1),
        "to_s": round((window.ended or window.began) - first, 1),
        "seconds": len(seconds),
        "sent_per_s": round(total.requests / n, 1),
        "served_per_s": round(served, 1),
        "served_share": round(served / window.offered, 4),
        "entities_per_s": round(total.entities / n, 1),
        "throttled_share": round(total.throttled / max(1, total.attempts), 4),
        "error_share": round((total.failures - throttle_failures) / max(1, total.requests), 4),
        "errors": dict(total.errors),
        "dropped": total.dropped,
        "p99_ms": _p99(_merged(latency, seconds)),
        "corrected_p99_ms": _p99(_merged(corrected, seconds)),
        "generator_cpu": _cpu(samples, seconds),
        "partitions": [  # busiest first: entities/s in all, and per op class
            {"partition": p, "entities_per_s": round(sum(by.values()) / n, 1), **{op: round(e / n, 1) for op, e in by.items()}}
            for p, by in sorted(partitions.items(), key=lambda item: (-item[1].total(), item[0]))
        ],
    }


def stopped_by(figures: Mapping[str, Any], plan: Plan) -> dict[str, str]:
    """The rules a step broke (rule -> what it measured), or an empty dict for a good step."""
    f, broken = figures, {}
    if f["served_share"] < MIN_SERVED_SHARE:
        broken["served"] = (
            f"served {f['served_per_s']:,.0f} of {f['offered_per_s']:,} operations/s offered "
            f"({f['served_share']:.0%}, under {MIN_SERVED_SHARE:.0%})"
        )
    if f["throttled_share"] > MAX_THROTTLED_SHARE:
        broken["throttled"] = f"{f['throttled_share']:.1%} of attempts throttled (over {MAX_THROTTLED_SHARE:.0%})"
    if f["error_share"] > MAX_ERROR_SHARE:
        codes = ", ".join(f"{code} x{n:,}" for code, n in f["errors"].items() if code not in THROTTLING_CODES)
        broken["errors"] = f"{f['error_share']:.1%} of operations failed ({codes})"
    if f["corrected_p99_ms"] > plan.max_p99_ms:
        broken["p99"] = f"corrected p99 {f['corrected_p99_ms']:,.0f} ms (over --max-p99 {plan.max_p99_ms:g} ms)"
    return broken


def _limit(figures: Mapping[str, Any], broken: Mapping[str, str], emulator: bool) -> tuple[str, str]:
    """What limited the search at the step that gave way: (one of ``LIMITS``, why, in words)."""
    said = f"at {figures['offered_per_s']:,} operations/s offered, " + "; ".join(broken.values())
    if "throttled" in broken:
        return "throttling", said
    if "errors" in broken:
        return "errors", said
    if figures["generator_cpu"] >= GENERATOR_CPU_PERCENT:
        return "generator", f"{said}; the load generator used {figures['generator_cpu']:.0f}% of a core"
    if emulator:
        return "emulator", f"{said}, without throttling: the emulator's own ceiling, not the design's"
    return "latency", said


def search(plan: Plan, steps: list[dict[str, Any]], *, emulator: bool, stopped: bool) -> dict[str, Any]:
    """The search's outcome from every judged step's figures: the ceiling (the last good step), and what ended it.

    ``stopped``: the test ended before the plan's last step (a step gave way, or someone stopped it)."""
    judged = []
    for figures in steps:
        broken = stopped_by(figures, plan)
        judged.append({**figures, "good": not broken, "broken": list(broken.values())})
        if broken:
            limit, reason = _limit(figures, broken, emulator)
            break
    else:
        limit = ""
        top = judged[-1]["offered_per_s"] if judged else 0
        if stopped:
            reason = f"the search was stopped at {top:,} operations/s before a step gave way: the ceiling is higher"
        else:
            reason = f"every step up to --ceiling-max ({top:,} operations/s) was good: the ceiling is higher"
    good = [s for s in judged if s["good"]]
    last = good[-1] if good else None
    if last is None and limit:
        reason = f"already the first step gave way ({reason}): start lower"
    ceiling = None
    if last is not None:
        ceiling = {
            "step": last["step"],
            "offered_per_s": last["offered_per_s"],
            "served_per_s": last["served_per_s"],
            "entities_per_s": last["entities_per_s"],
            "partitions": last["partitions"],
        }
    return {
        "plan": plan.to_dict(),
        "steps": judged,
        "ceiling": ceiling,
        "found": bool(limit),
        "limited_by": limit,
        "reason": reason,
    }


def judged(
    plan: Plan,
    windows: list[StepWindow],
    stopped: bool,
    buckets: Mapping[BucketKey, Bucket],
    metrics: PartitionMetrics,
    samples: Mapping[int, Mapping[str, Any]],
    first: float,
    *,
    emulator: bool,
) -> dict[str, Any]:
    """The results' search: every step that ran its course (not one cut short by the stop), judged from all counts."""
    whole = [w for w in windows if len(w.seconds()) >= plan.step_s - 2]
    steps = [step_figures(w, buckets, metrics.latency, metrics.corrected, samples, first) for w in whole]
    return search(plan, steps, emulator=emulator, stopped=stopped)
