"""Outages: whole seconds in which a partition completed nothing while its operations waited, timed out or were
refused — a frozen or stalled target, a range moved by load balancing ("offline a few seconds", the docs say).

Pure questions of the results: their per-second rows (answers, attempts, the longest operation ending each second)
and the partition layer's range splits (the emulator's, a simulation's). ``verdict`` names them as OUTAGE findings;
the report marks their seconds. A run that ends unanswered is TARGET_LOST, not an outage.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import series_frame
from ..bounds.run_span import target_lost
from ..buckets import GROUPS
from ..operations import OpClass
from ..results import Results
from ..service_errors import THROTTLING_CODES, UNANSWERED

__all__ = ["OUTAGE_AFTER_S", "Outage", "outages"]

OUTAGE_AFTER_S = 2  # whole seconds of nothing completed: one second can be a pause between operations
BEFORE_S = 5  # the seconds before an outage that show the partition was being served
#: Operations/s the partition completed in those seconds, at least: rarer traffic leaves gaps of whole seconds anyway.
SERVED_BEFORE = 1.0
_STALLED = THROTTLING_CODES | set(UNANSWERED)  # a failure without the partition's answer


@dataclass(frozen=True)
class Outage:
    """Seconds ``start``..``end`` (from the run's start) in which ``partition`` completed nothing."""

    partition: str
    start: int
    end: int
    failed: int  # attempts that timed out, went unanswered or were refused, counted up to the second it answered again
    longest_ms: int  # the longest operation that ended in it or as it came back: how long one waited
    cause: str
    shared: tuple  # what it shares with the other outages of its cause: ("split", i), ("target", start, end) or its own


@dataclass
class _Second:
    answered: int = 0  # operations the service answered (successes and 4xx alike)
    stalled: int = 0  # attempts without an answer: refused (503/500 timeout), unanswered, timed out
    longest_ms: int = 0


def _seconds(results: Results) -> tuple[dict[str, dict[int, _Second]], dict[int, _Second]]:
    """Per partition (and the whole target) and second: answers, stalled attempts, the longest operation."""
    frame = results.timeseries[results.timeseries["op_class"] != OpClass.ALL]
    answered = frame["requests"] - series_frame.tally(frame, "errors", _STALLED)
    rows = frame[["partition", "t", "longest_ms"]].assign(answered=answered, stalled=frame["attempts"] - answered)
    parts: dict[str, dict[int, _Second]] = defaultdict(lambda: defaultdict(_Second))
    for (partition, t), *figures in _per(rows, ["partition", "t"]):
        parts[partition][t] = _Second(*figures)
    whole: dict[int, _Second] = defaultdict(_Second, {t: _Second(*figures) for t, *figures in _per(rows, ["t"])})
    return parts, whole


def _per(rows: pd.DataFrame, keys: list[str]) -> Iterator[tuple[Any, int, int, int]]:
    """(key, answered, stalled, longest ms) of each group of ``rows`` by ``keys``."""
    grouped = rows.groupby(keys).agg({"answered": "sum", "stalled": "sum", "longest_ms": "max"})
    return zip(grouped.index.tolist(), *(grouped[c].tolist() for c in ("answered", "stalled", "longest_ms")), strict=True)


def _gaps(seconds: dict[int, _Second], last: int) -> list[tuple[int, int]]:
    """Runs of ``OUTAGE_AFTER_S`` or more seconds with nothing answered while operations waited through them (an
    operation that ended later had started before) or their attempts stalled, after seconds that were served."""
    if not seconds:
        return []
    first = min(t for t, s in seconds.items() if s.answered) if any(s.answered for s in seconds.values()) else last + 1
    waited: set[int] = set()
    for t, second in seconds.items():
        if second.longest_ms:  # it ended in [t, t + 1), so it started about t + 0.5 - w: it waited from that second on
            waited.update(range(max(first, math.floor(t + 0.5 - second.longest_ms / 1000.0)), t))
    gaps, start = [], None
    for t in range(first, last + 2):
        s = seconds.get(t)
        out = t <= last and (s is None or not s.answered) and (t in waited or (s is not None and s.stalled > 0))
        if out and start is None:
            start = t
        elif not out and start is not None:
            before = [seconds[b].answered if b in seconds else 0 for b in range(max(first, start - BEFORE_S), start)]
            if t - start >= OUTAGE_AFTER_S and before and sum(before) / len(before) >= SERVED_BEFORE:
                gaps.append((start, t - 1))
            start = None
    return gaps


def _cause(
    results: Results, partition: str, start: int, end: int, target_gap: tuple[int, int] | None, failed: int
) -> tuple[str, tuple]:
    """What the run knows of why, and what the outage shares with others of that cause: the partition layer moved the
    range (that split), the whole target answered nothing (its seconds), only refusals came back, or this partition
    alone stopped while the rest answered."""
    layer = "the simulated partition layer" if results.run.simulated else "the emulator's partition layer"
    clock = results.clock
    for i, split in enumerate(results.range_splits):
        low, high = split.get("low", ""), split.get("high", "")
        held = low <= partition and (not high or partition < high)
        if held and split["t"] < end + 1 and split["offline_until_t"] > start:
            upper = f"{high!r}" if high else "the end"
            cause = (
                f"{layer} split the range of keys from {low!r} up to {upper} at {split['key']!r} at "
                f"{clock.at(split['t'], '{:,.1f}')} and moved both halves to new servers: offline until "
                f"{clock.at(split['offline_until_t'], '{:,.1f}')}"
            )
            return cause, ("split", i)
    if target_gap:
        return "the whole target answered nothing meanwhile (a frozen or stalled service, or the network)", (
            "target",
            *target_gap,
        )
    alone = ("partition", partition, start, end)
    if failed:
        return "only this partition's operations went unanswered or refused while the rest of the target answered", alone
    return "only this partition's operations waited while the rest of the target answered", alone


def outages(results: Results) -> list[Outage]:
    """Every outage of a tracked partition, in time order (those of a target lost at the end left to TARGET_LOST)."""
    parts, whole = _seconds(results)
    if not whole:
        return []
    last = max(whole)
    lost = target_lost(results)
    target_gaps = _gaps(whole, last)
    found = []
    for partition, seconds in parts.items():
        if partition in GROUPS:
            continue
        for start, end in _gaps(seconds, last):
            if lost and end >= lost[0] - 1:
                continue  # the run ended unanswered from then on: TARGET_LOST says so
            around = [seconds[t] for t in range(start, end + 2) if t in seconds]
            failed = sum(s.stalled for s in around)
            target_gap = next(((s, e) for s, e in target_gaps if s <= end and start <= e), None)  # overlapping
            cause, shared = _cause(results, partition, start, end, target_gap, failed)
            found.append(
                Outage(
                    partition=partition,
                    start=start,
                    end=end,
                    failed=failed,
                    longest_ms=max((s.longest_ms for s in around), default=0),
                    cause=cause,
                    shared=shared,
                )
            )
    return sorted(found, key=lambda o: (o.start, o.partition))
