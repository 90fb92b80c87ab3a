"""The ceiling search's judgement: what each step of the plan served, the first step that gave way, and what
limited it. Pure: the shape (``shape``) runs the steps; the run that searched adds ``judged`` to its results.

A step is *good* while it serves at least ``MIN_SERVED_SHARE`` of the operations offered, throttles at most
``MAX_THROTTLED_SHARE`` of its attempts, fails at most ``MAX_ERROR_SHARE`` of its operations otherwise, and keeps
its corrected p99 (completion - when each operation was due) at or under ``--max-p99``. The sustained ceiling is
the last good step's served entities/s, per partition and op class.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from statistics import mean
from typing import Any

from ..bounds.cpu import GENERATOR_CPU_PERCENT, busiest_cpu, servers_cpu
from ..bounds.throttlers import throttler
from ..counting.bucket_frame import to_buckets
from ..counting.buckets import Bucket, BucketKey
from ..counting.counts import RunCounts, ms_at
from ..counting.latency import Latency
from ..results.form import RunInfo
from ..results.summary import counted
from ..service.error_codes import THROTTLING_CODES
from .plan import Plan, StepWindow

__all__ = ["judged", "search", "step_figures", "stopped_by"]

MIN_SERVED_SHARE = 0.95
MAX_THROTTLED_SHARE = 0.01
MAX_ERROR_SHARE = 0.01


def step_figures(
    window: StepWindow,
    buckets: Mapping[BucketKey, Bucket],
    latency: Latency,
    corrected: Latency,
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
        "throttled_by": dict(total.throttled_by),
        "error_share": round((total.failures - throttle_failures) / max(1, total.requests), 4),
        "errors": dict(total.errors),
        "dropped": total.dropped,
        "p99_ms": ms_at(latency.over(seconds), 99),
        "corrected_p99_ms": ms_at(corrected.over(seconds), 99),
        "generator_cpu": busiest_cpu(samples.get(second, {}) for second in sorted(seconds)),
        "servers_cpu": {
            server: round(mean(cpu), 1) for server, cpu in servers_cpu(samples.get(s, {}) for s in sorted(seconds)).items()
        },
        "machine_cpu": _mean_of(samples, seconds, "machine_cpu"),
        "capped": sum(samples.get(s, {}).get("in_flight", {}).get("capped", 0) for s in seconds),
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


def _mean_of(samples: Mapping[int, Mapping[str, Any]], seconds: set[int], name: str) -> float | None:
    read = [samples[s][name] for s in seconds if samples.get(s, {}).get(name) is not None]
    return round(mean(read), 1) if read else None


def _throttled_by(figures: Mapping[str, Any], throttlers: Mapping[str, str]) -> str:
    """The step's throttled attempts by what judged them (``throttlers``: a reason's budget or target, in words)."""
    by = sorted(figures.get("throttled_by", {}).items(), key=lambda kv: (-kv[1], kv[0]))
    said = [f"{n:,} by {throttlers[reason]}" for reason, n in by if reason in throttlers]
    return f" ({', '.join(said)})" if said else ""


def _limit(
    figures: Mapping[str, Any], broken: Mapping[str, str], emulator: bool, throttlers: Mapping[str, str]
) -> tuple[str, str]:
    """What limited the search at the step that gave way: (one of ``LIMITS``, why, in words), as measured: the
    service's answers (throttled: by which budget or target), a process out of CPU (named, with its figure), the
    machine's cores, too few lanes in flight."""
    said = f"at {figures['offered_per_s']:,} operations/s offered, " + "; ".join(broken.values())
    if "throttled" in broken:
        return "throttling", said + _throttled_by(figures, throttlers)
    if "errors" in broken:
        return "errors", said
    if figures["generator_cpu"] >= GENERATOR_CPU_PERCENT:
        return "generator", f"{said}; the load generator used {figures['generator_cpu']:.0f}% of a core"
    servers = figures.get("servers_cpu", {})
    busiest = max(servers.items(), key=lambda item: item[1], default=None)
    if busiest and busiest[1] >= GENERATOR_CPU_PERCENT:
        return "emulator", f"{said}, without throttling: {busiest[0]} used {busiest[1]:.0f}% of a core, its ceiling"
    machine = figures.get("machine_cpu")
    if machine is not None and machine >= GENERATOR_CPU_PERCENT:
        used = ", ".join(
            f"{name} {cpu:.0f}%" for name, cpu in (*servers.items(), ("the load generator", figures["generator_cpu"]))
        )
        return "machine", f"{said}; the machine's cores were {machine:.0f}% busy ({used} of a core)"
    if figures.get("capped"):
        return "concurrency", f"{said}; {figures['capped']:,} slots waited for a lane (--max-in-flight)"
    if emulator and not servers:  # a local emulator the tool did not start: its CPU unread
        return "emulator", f"{said}, without throttling (the emulator's CPU was not read here)"
    return "latency", said


def search(
    plan: Plan,
    steps: list[dict[str, Any]],
    *,
    emulator: bool,
    stopped: bool,
    throttlers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The search's outcome from every judged step's figures: the ceiling (the last good step), and what ended it.

    ``stopped``: the test ended before the plan's last step (a step gave way, or someone stopped it); ``throttlers``:
    what judged a throttled attempt, by reason (``throttlers.throttler``: the emulator's budget, or Azure's target)."""
    judged = []
    for figures in steps:
        broken = stopped_by(figures, plan)
        judged.append({**figures, "good": not broken, "broken": list(broken.values())})
        if broken:
            limit, reason = _limit(figures, broken, emulator, throttlers or {})
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
    counts: RunCounts,
    info: RunInfo,
    samples: Mapping[int, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The results' search (``CeilingShape.ran``'s steps): every step that ran its course (not one cut short by the
    stop), judged again from all the run's counts, the keys folded as the results fold them."""
    phases, frame, _ = counted(counts)
    buckets = to_buckets(frame)
    whole = [w for w in windows if len(w.seconds()) >= plan.step_s - 2]
    steps = [step_figures(w, buckets, counts.latency, counts.corrected, samples or {}, phases.span[0]) for w in whole]
    throttlers = {reason: throttler(info, reason) for reason in ("partition", "account")}  # named where it limited
    return search(plan, steps, emulator=info.emulator, stopped=stopped, throttlers=throttlers)
