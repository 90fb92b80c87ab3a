"""From what a run counted to its figures: a pure step (its inputs stay as they were).

Mean and peak entities/s over the run's phases (``phases``); ratio is peak / target. The results read the whole run's
counts as one frame, column by column (``bucket_frame``: a day's seconds are millions of rows); the live web view
reads the recent buckets with ``per_partition``, ``series`` and ``demand``, and takes its peaks as the results do
(``phases.moving_average_peak``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

from ..counting.bucket_frame import summed, tallied
from ..counting.buckets import GROUPS, OTHER, Bucket, BucketKey
from ..counting.counts import HOT_ENTITIES, RunCounts, max_ms, ms_at, new_histogram
from ..counting.latency import Latency
from ..counting.phases import Phases
from ..service.operations import OpClass
from . import series_frame
from .form import AccountRow, PartitionRow, Results, RunInfo
from .key_order import key_order
from .rolled_frame import BIN_COLUMN, minute_bins, rolled_counts
from .whole_totals import made_whole

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


def _demand_figures(seconds: np.ndarray, asked: np.ndarray, phases: Phases, target: int, mean: float) -> dict[str, float]:
    peak = phases.sparse_peak(seconds, asked)
    return {
        "offered_mean_eps": mean,
        "offered_peak_eps": peak,
        "offered_ratio": round(peak / target, 4),
    }


def _asked(frame: pd.DataFrame) -> pd.Series:
    """Entities asked for: sent (served or not) and, in an open loop, never sent (``Bucket.demand``)."""
    return frame["offered"] + frame["unsent"]


def _figures(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seconds, entities served, entities asked) of ``rows``, a row each: the series where it is not zero, never made
    a second each (a month's span over many partitions would not fit)."""
    return rows["second"].to_numpy(np.int64), rows["entities"].to_numpy(np.float64), _asked(rows).to_numpy(np.float64)


def _seconds_of(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of one second each: all of them, or of a long span's frame those kept a second each (``rolled_frame``:
    every second of each peak's window is among them)."""
    return rows if BIN_COLUMN not in rows else rows[rows[BIN_COLUMN] == 1]


def _means(rows: pd.DataFrame, phases: Phases) -> tuple[float, float]:
    """Mean entities/s, served and asked, over the steady phase: every row's counts, whatever seconds it holds."""
    seconds, values, asked = _figures(rows)
    return phases.sparse_mean(seconds, values), phases.sparse_mean(seconds, asked)


def _life(rows: pd.DataFrame, phases: Phases, partition: str) -> int:
    """A partition's seconds from its first with load to its last, where fewer than the peak window and busy in them
    (``HOT_ENTITIES`` a second or more: a key written a moment, not one read once); else 0. A long span's bin counts
    all its seconds."""
    seconds, values, asked = _figures(rows)
    loaded = asked > 0 if (asked > 0).any() else values > 0  # its demand's seconds: a retry served later is not life
    if partition in GROUPS or not loaded.any():
        return 0
    width = rows[BIN_COLUMN].to_numpy(np.int64) if BIN_COLUMN in rows else np.ones(len(rows), np.int64)
    life = int((seconds + width - 1)[loaded].max() - seconds[loaded].min()) + 1
    busy = max(float(values.sum()), float(asked.sum())) / life >= HOT_ENTITIES
    return life if life < phases.window and busy else 0


def _row(partition: str, op_class: OpClass, rows: pd.DataFrame, phases: Phases, target: int) -> PartitionRow:
    total = {name: int(rows[name].sum()) for name in ("requests", "entities", "offered", "estimated", "failures")}
    seconds, values, asked = _figures(_seconds_of(rows))
    mean, asked_mean = _means(rows, phases)
    life = _life(rows, phases, partition)
    phases = replace(phases, window=life) if life else phases  # its peak over its own life
    peak = phases.sparse_peak(seconds, values)
    return PartitionRow(
        life_s=life,
        **_demand_figures(seconds, asked, phases, target, asked_mean),
        partition=partition,
        op_class=op_class,
        **total,
        mean_eps=mean,
        peak_eps=peak,
        target=target,
        ratio=round(peak / target, 4),
        attempts=int(rows["attempts"].sum()),
        throttled=int(rows["throttled"].sum()),
        errors=tallied(rows["errors"]),
        throttled_by=tallied(rows["throttled_by"]),
    )


def partition_rows(frame: pd.DataFrame, phases: Phases, target: int) -> list[PartitionRow]:
    """One row per partition and op class, and an ALL row where a (tracked) partition had both."""
    rows = []
    for partition, classes in frame.groupby("partition", sort=True):
        by_class = list(classes.groupby("op_class", sort=True))
        rows.extend(_row(partition, OpClass(op_class), group, phases, target) for op_class, group in by_class)
        if len(by_class) > 1 and partition not in GROUPS:
            rows.append(_row(partition, OpClass.ALL, classes, phases, target))
    return sorted(rows, key=lambda row: (row.op_class == OpClass.ALL, row.partition, row.op_class))


def account_row(frame: pd.DataFrame, phases: Phases, target: int) -> AccountRow:
    """Every partition's entities together, each second's in that second (looked up, never indexed by an offset)."""
    seconds, values, asked = _figures(_seconds_of(frame))
    peak = phases.sparse_peak(seconds, values)
    mean, asked_mean = _means(frame, phases)
    return AccountRow(
        entities=int(frame["entities"].sum()),
        mean_eps=mean,
        peak_eps=peak,
        target=target,
        ratio=round(peak / target, 4),
        **_demand_figures(seconds, asked, phases, target, asked_mean),
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
    frame: pd.DataFrame, phases: Phases, rate: float, kind: str, in_flight: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """Open loop, over the steady phase: operations offered (the users' schedules: the rate asked, once every user
    runs), sent and served per second side by side; and over the whole run how many were sent on a schedule, late,
    or dropped (a user learns of the slots it dropped when it is free again: those still overdue at the end are not
    counted); and its operations in flight (``in_flight_figures``)."""
    if not rate:
        return {}
    seconds = max(1, len(phases.steady))
    steady = frame[frame["second"].between(phases.steady.start, phases.steady.stop - 1)]
    sent, failed = int(steady["requests"].sum()), int(steady["failures"].sum())
    return {
        "rate": rate,
        "arrivals": kind,
        "offered_per_s": rate,
        "sent_per_s": round(sent / seconds, 2),
        "served_per_s": round((sent - failed) / seconds, 2),
        **{name: int(frame[name].sum()) for name in ("scheduled", "late", "dropped")},
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
    frame: pd.DataFrame,
    latency: Latency,
    samples: Mapping[int, Mapping[str, float]],
    first: int,
    bin_of: Callable[[int], int] | None = None,
) -> pd.DataFrame:
    """One row per second, partition and op class (``series_frame``'s columns), in the frame's order (``summed``'s: by
    key); latency is per second and op class (its minute's once aged: ``latency``), its percentiles read once for all
    the second's partitions. A long span's frame (``rolled_frame``; ``bin_of``: a minute's bin) holds bins too: a
    bin's percentiles are its minutes' together, and a second's its minute's."""
    read = latency.figures()
    width = frame[BIN_COLUMN].to_numpy(np.int64) if BIN_COLUMN in frame else np.ones(len(frame), np.int64)
    pairs = frame[["second", "op_class"]].assign(_binned=width > 1).drop_duplicates()
    binned = latency.bin_figures(bin_of) if bin_of is not None else {}
    figures = pd.DataFrame(
        [
            binned.get((second, op_class), (0.0,) * 4) if whole else read(second, op_class)
            for second, op_class, whole in zip(
                pairs["second"].tolist(), pairs["op_class"].tolist(), pairs["_binned"].tolist(), strict=True
            )
        ],
        columns=list(series_frame.LATENCY),
        dtype="float64",
    )
    percentiles = pd.concat([pairs.reset_index(drop=True), figures], axis=1)
    rows = frame.assign(_binned=width > 1).merge(percentiles, on=["second", "op_class", "_binned"], how="left", sort=False)
    users = {second: sample["users"] for second, sample in samples.items() if sample.get("users") is not None}
    rows["t"] = rows["second"] - first
    rows["users"] = rows["second"].map(users)
    rows[BIN_COLUMN] = width
    return series_frame.of_frame(rows)


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
        "partial": len({r.partition for r in single if r.partial}),
    }


def counted(
    counts: RunCounts, buckets: pd.DataFrame | None = None, *, roll: bool = False
) -> tuple[Phases, pd.DataFrame, Counter[tuple[int, str]]]:
    """The run's phases, its buckets as a frame (``bucket_frame``) with every key outside the top folded into
    ``OTHER``, and the entities folded per (second, key range). ``buckets``: ``RunCounts.frame()``, where the caller has
    made it already. ``roll``: a span longer than a day is read a chunk at a time into ``rolled_frame``'s form (its
    clock must be whole: records read, not a run still counting)."""
    if roll and buckets is None and (long_span := rolled_counts(counts)) is not None:
        return long_span
    frame = counts.frame() if buckets is None else buckets
    phases = Phases.of(frame["second"].unique().tolist(), counts.started, counts.steady_from, counts.stopped, counts.steady_until)
    ranges = Counter(counts.ranges)
    folding = ~frame["partition"].isin(frozenset(counts.top_partitions()) | GROUPS)
    if folding.any():
        moved = frame[folding]
        by_range = moved.groupby([moved["second"], moved["partition"].str[:1]])["entities"].sum()
        ranges.update({(int(second), start): int(n) for (second, start), n in by_range.items()})
        frame = summed(frame.assign(partition=frame["partition"].where(~folding, OTHER)))
    return phases, frame, ranges


def build(
    counts: RunCounts,
    info: RunInfo,
    *,
    samples: Mapping[int, Mapping[str, float]] | None = None,
    workers: Mapping[str, Any] | None = None,
    workload: Mapping[str, Any] | None = None,
    buckets: pd.DataFrame | None = None,
    roll: bool = False,
) -> Results:
    """The run's results from what was counted (a run's, the engines' added, a simulation's), the per-second samples,
    the workers' record and the workload profile's figures (``buckets``: ``RunCounts.frame()``, where the caller has made
    it already; ``roll``: records read over more than a day, in ``rolled_frame``'s form). A ceiling search's
    judgement is the ceiling's own (``ceiling.judge.judged``), added by the run that searched."""
    samples = samples or {}
    recorded = info.recorded
    rate = recorded.arrival_rate
    phases, frame, ranges = counted(counts, buckets, roll=roll)
    first, last = phases.span[0], phases.span[-1]
    bin_of = minute_bins(counts, phases) if BIN_COLUMN in frame else None  # a long span's latency: its bins'
    rows = partition_rows(frame, phases, info.partition_target)
    rows = made_whole(rows, counts.folded, counts.top_partitions(), info.partition_target)
    for row in rows:  # a key counted apart only once it was among the hottest: its peak is at least what it says
        row.partial = counts.partial(row.partition)
    single = [r for r in rows if r.op_class != OpClass.ALL]
    errors, attempts = Counter(), sum(r.attempts for r in single)
    for row in single:
        errors.update(row.errors)
    backoff_ms = int(frame["backoff_ms"].sum())
    run = replace(
        info,
        steady_from_s=float(phases.steady[0] - first) if phases.ramped else 0.0,
        steady_seconds=len(phases.steady) if phases.ramped else 0,
        peak_window_s=phases.window,
    )
    results = Results(
        run=run,
        partitions=rows,
        account=account_row(frame, phases, info.account_target),
        errors=dict(errors),
        attempts=attempts,
        timeseries=timeseries(frame, counts.latency, samples, first, bin_of),
        load=[{"t": s - first, **v} for s, v in sorted(samples.items()) if first <= s <= last],
        workers=dict(workers or {}),
        workload=dict(workload or {}),
        latency=latency_figures(counts.latency, counts.first_attempt, counts.corrected),
        arrivals=arrival_figures(frame, phases, rate, recorded.arrivals, in_flight_figures(samples, rate)),
        keys=key_figures(rows, counts.distinct_partitions()),
        retry={
            "strategy": recorded.retry,
            "backoff_s": round(backoff_ms / 1000.0, 3),
            "attempts_per_operation": round(attempts / max(1, sum(r.requests for r in single)), 4),
        },
        key_ranges=[{"t": second - first, "range": start, "entities": n} for (second, start), n in sorted(ranges.items()) if n],
    )
    results.key_order = key_order(counts.edges_now(), phases, info.partition_target, open_loop=results.open_loop)
    return results
