"""From what a run counted to its figures: a pure step (its inputs stay as they were).

Mean and peak entities/s over the run's phases (``phases``); ratio is peak / target. The live web view reads the same
series and peaks as the results, from the same functions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from hdrh.histogram import HdrHistogram

from .buckets import GROUPS, Bucket, BucketKey, fold
from .counts import RunCounts, max_ms, ms_at, new_histogram
from .latency import Latency
from .operations import OpClass
from .phases import Phases
from .results import AccountRow, PartitionRow, Results, RunInfo

__all__ = ["build", "counted", "demand", "per_partition", "series"]


def per_partition(buckets: Mapping[BucketKey, Bucket]) -> dict[tuple[str, str], dict[int, Bucket]]:
    """(partition, op class) -> second -> bucket."""
    grouped: dict[tuple[str, str], dict[int, Bucket]] = defaultdict(dict)
    for (second, partition, op_class), bucket in buckets.items():
        grouped[(partition, op_class)][second] = bucket
    return grouped


def series(by_second: Mapping[int, Bucket], span: list[int]) -> list[float]:
    """Entities served in each second of ``span`` (0 where nothing was)."""
    return [float(by_second[s].entities) if s in by_second else 0.0 for s in span]


def demand(by_second: Mapping[int, Bucket], span: list[int]) -> list[float]:
    """Entities asked for in each second of ``span``: sent (served or not) and, in an open loop, never sent."""
    return [float(by_second[s].demand) if s in by_second else 0.0 for s in span]


def _demand_figures(values: list[float], phases: Phases, target: int) -> dict[str, float]:
    peak = phases.peak(values)
    return {"offered_mean_eps": phases.mean(values), "offered_peak_eps": peak, "offered_ratio": round(peak / target, 4)}


def _row(
    partition: str,
    op_class: OpClass,
    buckets: Iterable[Bucket],
    values: list[float],
    asked: list[float],
    phases: Phases,
    target: int,
) -> PartitionRow:
    total = Bucket()
    for bucket in buckets:
        total.add(bucket)
    peak = phases.peak(values)
    return PartitionRow(
        **_demand_figures(asked, phases, target),
        partition=partition,
        op_class=op_class,
        requests=total.requests,
        entities=total.entities,
        mean_eps=phases.mean(values),
        peak_eps=peak,
        target=target,
        ratio=round(peak / target, 4),
        offered=total.offered,
        estimated=total.estimated,
        failures=total.failures,
        attempts=total.attempts,
        throttled=total.throttled,
        errors=dict(total.errors),
        throttled_by=dict(total.throttled_by),
    )


def partition_rows(buckets: Mapping[BucketKey, Bucket], phases: Phases, target: int) -> list[PartitionRow]:
    """One row per partition and op class, and an ALL row where a (tracked) partition had both."""
    rows, both = [], defaultdict(list)
    for (partition, op_class), by_second in sorted(per_partition(buckets).items()):
        values, asked = series(by_second, phases.span), demand(by_second, phases.span)
        rows.append(_row(partition, OpClass(op_class), by_second.values(), values, asked, phases, target))
        both[partition].append((by_second, values, asked))
    for partition, classes in sorted(both.items()):
        if len(classes) > 1 and partition not in GROUPS:
            values = [sum(v) for v in zip(*(v for _, v, _ in classes), strict=True)]
            asked = [sum(v) for v in zip(*(a for _, _, a in classes), strict=True)]
            buckets_of = [b for by_second, _, _ in classes for b in by_second.values()]
            rows.append(_row(partition, OpClass.ALL, buckets_of, values, asked, phases, target))
    return rows


def account_row(buckets: Mapping[BucketKey, Bucket], phases: Phases, target: int) -> AccountRow:
    """Every partition's entities together, each second's in that second (looked up, never indexed by an offset)."""
    served: Counter[int] = Counter()
    wanted: Counter[int] = Counter()
    for (second, _, _), bucket in buckets.items():
        served[second] += bucket.entities
        wanted[second] += bucket.demand
    values, asked = [float(served[s]) for s in phases.span], [float(wanted[s]) for s in phases.span]
    peak, entities = phases.peak(values), sum(b.entities for b in buckets.values())
    return AccountRow(
        entities=entities,
        mean_eps=phases.mean(values),
        peak_eps=peak,
        target=target,
        ratio=round(peak / target, 4),
        **_demand_figures(asked, phases, target),
    )


def latency_figures(
    latency: Latency, first_attempt: Mapping[str, HdrHistogram], corrected: Latency | None = None
) -> dict[str, dict[str, float]]:
    """Per op class: end-to-end percentiles over the run (the service time), the first attempt's, and in an open loop
    the corrected ones (from when each operation was due)."""
    merged, due_by_class = latency.by_op_class(), corrected.by_op_class() if corrected is not None else {}
    figures = {}
    for op_class, hist in sorted(merged.items()):
        first_try = first_attempt.get(op_class) or new_histogram()
        figures[op_class] = {
            "p50_ms": ms_at(hist, 50),
            "p95_ms": ms_at(hist, 95),
            "p99_ms": ms_at(hist, 99),
            "max_ms": max_ms(hist),
            "first_attempt_p50_ms": ms_at(first_try, 50),
            "first_attempt_p99_ms": ms_at(first_try, 99),
        }
        due = due_by_class.get(op_class)
        if due is not None and due.get_total_count():
            top = max_ms(due)
            figures[op_class].update(corrected_p50_ms=ms_at(due, 50), corrected_p99_ms=ms_at(due, 99), corrected_max_ms=top)
    return figures


def arrival_figures(
    buckets: Mapping[BucketKey, Bucket], phases: Phases, rate: float, kind: str, in_flight: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """Open loop, over the steady phase: operations offered (the users' schedules: the rate asked, once every user
    runs), sent and served per second side by side; and over the whole run how many were sent on a schedule, late,
    or dropped (a user learns of the slots it dropped when it is free again: those still overdue at the end are not
    counted); and its operations in flight (``in_flight_figures``)."""
    if not rate:
        return {}
    steady, seconds = set(phases.steady), max(1, len(phases.steady))
    total = Bucket()
    in_steady = Bucket()
    for (second, _, _), bucket in buckets.items():
        total.add(bucket)
        if second in steady:
            in_steady.add(bucket)
    return {
        "rate": rate,
        "arrivals": kind,
        "offered_per_s": rate,
        "sent_per_s": round(in_steady.requests / seconds, 2),
        "served_per_s": round((in_steady.requests - in_steady.failures) / seconds, 2),
        "scheduled": total.scheduled,
        "late": total.late,
        "dropped": total.dropped,
        **({"in_flight": dict(in_flight)} if in_flight else {}),
    }


def in_flight_figures(samples: Mapping[int, Mapping[str, Any]], rate: float) -> dict[str, float]:
    """Open loop, over the run: the most operations in flight at once and the bound (every process together), the
    slots that waited for a lane, the mean time an operation held its lane, and what the schedule needed in flight
    by Little's law (rate x that mean hold)."""
    per_second = [sample["in_flight"] for sample in samples.values() if sample.get("in_flight")]
    if not rate or not per_second:
        return {}
    done = sum(s.get("done", 0) for s in per_second)
    hold_s = sum(s.get("held_s", 0.0) for s in per_second) / done if done else 0.0
    return {
        "peak": max(s.get("in_flight", 0) for s in per_second),
        "cap": max(s.get("cap", 0) for s in per_second),
        "capped": sum(s.get("capped", 0) for s in per_second),
        "mean_hold_ms": round(hold_s * 1000.0, 2),
        "needed": round(rate * hold_s, 1),
    }


def timeseries(
    buckets: Mapping[BucketKey, Bucket], latency: Latency, samples: Mapping[int, Mapping[str, float]], first: int
) -> list[dict[str, Any]]:
    """One row per second, partition and op class (timeseries.csv); latency is per second and op class (its minute's
    once aged: ``latency``), its percentiles read once for all the second's partitions."""
    rows = []
    read = latency.figures()
    for (second, partition, op_class), bucket in sorted(buckets.items()):
        p50, p95, p99, top = read(second, op_class)
        rows.append(
            {
                "t": second - first,
                "second": second,
                "partition": partition,
                "op_class": op_class,
                **bucket.to_dict(),
                "p50_ms": p50,
                "p95_ms": p95,
                "p99_ms": p99,
                "max_ms": top,
                "users": samples.get(second, {}).get("users"),
            }
        )
    return rows


def key_figures(rows: list[PartitionRow], distinct: float) -> dict[str, Any]:
    """How concentrated the load was: distinct keys (estimated), tracked keys, top-1 and top-10 shares."""
    single = [r for r in rows if r.op_class != OpClass.ALL]
    totals: Counter[str] = Counter()
    for row in single:
        totals[row.partition] += row.entities
    everything = sum(totals.values()) or 1.0
    tracked = sorted(((n, p) for p, n in totals.items() if p not in GROUPS), key=lambda item: (-item[0], item[1]))
    return {
        "distinct": round(distinct),
        "tracked": len(tracked),
        "top": [p for _, p in tracked[:10]],
        "top1_share": round(sum(n for n, _ in tracked[:1]) / everything, 4),
        "top10_share": round(sum(n for n, _ in tracked[:10]) / everything, 4),
        "estimated_entities": sum(r.estimated for r in single),
    }


def counted(counts: RunCounts) -> tuple[Phases, dict[BucketKey, Bucket], Counter[tuple[int, str]]]:
    """The run's phases, its buckets with every key outside the top folded into ``OTHER`` (on a copy), and the
    entities folded per (second, key range)."""
    phases = Phases.of(
        (key[0] for key in counts.buckets), counts.started, counts.steady_from, counts.stopped, counts.steady_until
    )
    buckets, folded = fold(counts.buckets, keep=frozenset(counts.top_partitions()), before=phases.span[-1] + 1)
    return phases, buckets, Counter(counts.ranges) + folded


def build(
    counts: RunCounts,
    info: RunInfo,
    *,
    samples: Mapping[int, Mapping[str, float]] | None = None,
    workers: Mapping[str, Any] | None = None,
    workload: Mapping[str, Any] | None = None,
) -> Results:
    """The run's results from what was counted (a run's, the engines' added, a simulation's), the per-second samples,
    the workers' record and the workload profile's figures. A ceiling search's judgement is the ceiling's own
    (``ceiling.judge.judged``), added by the run that searched."""
    samples = samples or {}
    rate = float(info.settings.get("arrival_rate", 0) or 0)
    phases, buckets, ranges = counted(counts)
    first, last = phases.span[0], phases.span[-1]
    rows = partition_rows(buckets, phases, info.partition_target)
    single = [r for r in rows if r.op_class != OpClass.ALL]
    errors, attempts = Counter(), sum(r.attempts for r in single)
    for row in single:
        errors.update(row.errors)
    backoff_ms = sum(b.backoff_ms for b in buckets.values())
    run = replace(
        info,
        steady_from_s=float(phases.steady[0] - first) if phases.ramped else 0.0,
        steady_seconds=len(phases.steady) if phases.ramped else 0,
        peak_window_s=phases.window,
    )
    return Results(
        run=run,
        partitions=rows,
        account=account_row(buckets, phases, info.account_target),
        errors=dict(errors),
        attempts=attempts,
        timeseries=timeseries(buckets, counts.latency, samples, first),
        load=[{"t": s - first, **v} for s, v in sorted(samples.items()) if first <= s <= last],
        workers=dict(workers or {}),
        workload=dict(workload or {}),
        latency=latency_figures(counts.latency, counts.first_attempt, counts.corrected),
        arrivals=arrival_figures(buckets, phases, rate, str(info.settings.get("arrivals", "")), in_flight_figures(samples, rate)),
        keys=key_figures(rows, counts.distinct_partitions()),
        retry={
            "strategy": info.settings.get("retry", ""),
            "backoff_s": round(backoff_ms / 1000.0, 3),
            "attempts_per_operation": round(attempts / max(1, sum(r.requests for r in single)), 4),
        },
        key_ranges=[{"t": second - first, "range": start, "entities": n} for (second, start), n in sorted(ranges.items()) if n],
    )
