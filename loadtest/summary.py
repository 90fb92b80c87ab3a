"""From per-second buckets to the run's figures: a pure step (its inputs stay as they were).

Mean entities/s covers the steady phase (the whole seconds after all users started and before
they stopped; a run without one says so: ``steady_seconds`` 0); peak is the highest ``PEAK_WINDOW_S``-second
moving average (shorter when the steady phase is: ``peak_window_s``); ratio is peak / target. The live web view
reads the same series and peaks as the results, from the same functions.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from hdrh.histogram import HdrHistogram

from .bounds import throttler
from .buckets import OTHER, Bucket, BucketKey, fold
from .ceiling.judge import judged
from .ceiling.plan import Plan, StepWindow
from .metrics import PartitionMetrics, max_ms, ms_at, new_histogram
from .operations import OpClass
from .results import PEAK_WINDOW_S, AccountRow, PartitionRow, Results, RunInfo

__all__ = ["PEAK_WINDOW_S", "Phases", "build", "moving_average_peak", "per_partition", "series"]


def moving_average_peak(values: list[float], window: int = PEAK_WINDOW_S) -> float:
    """The highest mean over ``window`` consecutive seconds (the whole series if shorter)."""
    if not values:
        return 0.0
    window = min(window, len(values))
    total = best = sum(values[:window])
    for i in range(window, len(values)):
        total += values[i] - values[i - window]
        best = max(best, total)
    return best / window


@dataclass(frozen=True)
class Phases:
    """Every second of the run (``span``), the seconds its means cover (``steady``), and the peak window.

    ``steady`` is the steady phase: the whole seconds with every user running, from the first after spawning completed
    to the last before the stop (the stop's second is partial; later ones hold only what finished after it, or a
    worker's clock ahead of the master's). A run with no such second (its ramp never finished, or finished in its
    last, partial second) has no steady phase (``ramped`` False): its means cover the whole seconds its users ran,
    ramp included, and the results say so with ``steady_seconds`` 0. ``span`` starts at the run's start or at an
    earlier bucket (a worker's clock behind the master's): every bucket counts in its own second."""

    span: list[int]
    steady: list[int]
    window: int
    ramped: bool = True

    @classmethod
    def of(
        cls,
        seconds: Iterable[int],
        started: float | None,
        steady_from: float | None,
        stopped: float | None,
        steady_until: float | None = None,
    ) -> Phases:
        """``steady_until``: the steady phase ends earlier than the run (merged engines: when the first stopped)."""
        seconds = list(seconds)
        earliest = min(seconds, default=None)
        start = int(started) if started else (earliest if earliest is not None else 0)
        first = start if earliest is None else min(start, earliest)
        last = max(seconds, default=first)
        if stopped:
            last = max(last, int(stopped) - 1)
        span = list(range(first, last + 1))
        end = int(stopped) if stopped else last + 1  # the first second not wholly before the stop
        if steady_until:
            end = min(end, int(steady_until))
        ran = [s for s in span if start <= s < end] or span  # a run under a second: its one, partial second
        if steady_from is None and not stopped:  # still running (or a count with no clock): all of it so far
            return cls(span, ran, max(1, min(PEAK_WINDOW_S, len(ran))))
        steady = [s for s in ran if s >= math.ceil(steady_from)] if steady_from is not None else []
        # a run shorter than the window: the peak window is the steady phase, so peak >= mean
        return cls(span, steady or ran, max(1, min(PEAK_WINDOW_S, len(steady or ran))), ramped=bool(steady))

    def mean(self, values: list[float]) -> float:
        if not self.steady:
            return 0.0
        offset = self.span[0]
        return round(sum(values[s - offset] for s in self.steady) / len(self.steady), 2)

    def peak(self, values: list[float]) -> float:
        return round(moving_average_peak(values, self.window), 2)


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
        if len(classes) > 1 and partition != OTHER:
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


def _by_op_class(hists: Mapping[tuple[int, str], HdrHistogram]) -> dict[str, HdrHistogram]:
    merged: dict[str, HdrHistogram] = {}
    for (_, op_class), hist in hists.items():
        merged.setdefault(op_class, new_histogram()).add(hist)
    return merged


def latency_figures(
    latency: Mapping[tuple[int, str], HdrHistogram],
    first_attempt: Mapping[str, HdrHistogram],
    corrected: Mapping[tuple[int, str], HdrHistogram] | None = None,
) -> dict[str, dict[str, float]]:
    """Per op class: end-to-end percentiles over the run (the service time), the first attempt's, and in an open loop
    the corrected ones (from when each operation was due)."""
    merged, due_by_class = _by_op_class(latency), _by_op_class(corrected or {})
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
    buckets: Mapping[BucketKey, Bucket],
    latency: Mapping[tuple[int, str], HdrHistogram],
    samples: Mapping[int, Mapping[str, float]],
    first: int,
) -> list[dict[str, Any]]:
    """One row per second, partition and op class (timeseries.csv)."""
    rows = []
    for (second, partition, op_class), bucket in sorted(buckets.items()):
        hist = latency.get((second, op_class))
        p50, p95, p99, top = (ms_at(hist, 50), ms_at(hist, 95), ms_at(hist, 99), max_ms(hist)) if hist is not None else (0.0,) * 4
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
    tracked = sorted(((n, p) for p, n in totals.items() if p != OTHER), key=lambda item: (-item[0], item[1]))
    return {
        "distinct": round(distinct),
        "tracked": len(tracked),
        "top": [p for _, p in tracked[:10]],
        "top1_share": round(sum(n for n, _ in tracked[:1]) / everything, 4),
        "top10_share": round(sum(n for n, _ in tracked[:10]) / everything, 4),
        "estimated_entities": sum(r.estimated for r in single),
    }


def _throttlers(info: RunInfo) -> dict[str, str]:
    """What judged a throttled attempt, by reason, in words (a ceiling search names it where throttling limited it)."""
    return {reason: throttler(info, reason) for reason in ("partition", "account")}


def build(
    metrics: PartitionMetrics,
    info: RunInfo,
    *,
    samples: Mapping[int, Mapping[str, float]] | None = None,
    workers: Mapping[str, Any] | None = None,
    workload: Mapping[str, Any] | None = None,
    search: tuple[Plan, list[StepWindow], bool] | None = None,
) -> Results:
    """The run's results from what the metrics counted, the per-second samples, the workers' record, the workload
    profile's figures and a ceiling search's steps (``CeilingShape.ran``), judged again now that all counts are in."""
    samples = samples or {}
    rate = float(info.settings.get("arrival_rate", 0) or 0)
    phases = Phases.of(
        (key[0] for key in metrics.buckets), metrics.started, metrics.steady_from, metrics.stopped, metrics.steady_until
    )
    first, last = phases.span[0], phases.span[-1]
    buckets, folded = fold(metrics.buckets, keep=frozenset(metrics.top_partitions()), before=last + 1)  # on a copy
    ranges = Counter(metrics.ranges) + folded
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
        timeseries=timeseries(buckets, metrics.latency, samples, first),
        load=[{"t": s - first, **v} for s, v in sorted(samples.items()) if first <= s <= last],
        workers=dict(workers or {}),
        workload=dict(workload or {}),
        latency=latency_figures(metrics.latency, metrics.first_attempt, metrics.corrected),
        arrivals=arrival_figures(buckets, phases, rate, str(info.settings.get("arrivals", "")), in_flight_figures(samples, rate)),
        keys=key_figures(rows, metrics.distinct_partitions()),
        retry={
            "strategy": info.settings.get("retry", ""),
            "backoff_s": round(backoff_ms / 1000.0, 3),
            "attempts_per_operation": round(attempts / max(1, sum(r.requests for r in single)), 4),
        },
        ceiling=judged(*search, buckets, metrics, samples, first, emulator=info.emulator, throttlers=_throttlers(info))
        if search
        else {},
        key_ranges=[{"t": second - first, "range": start, "entities": n} for (second, start), n in sorted(ranges.items()) if n],
    )
