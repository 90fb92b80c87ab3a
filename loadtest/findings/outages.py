"""Outages: whole seconds in which a partition answered nothing while its operations waited, timed out or went
unanswered — a frozen or stalled target, a range moved by load balancing ("offline a few seconds", the docs say). A
second in which the service refused its attempts (throttled them) was answered: that silence is THROTTLED's.

Pure questions of the results: their per-second rows (answers, attempts, the longest operation ending each second;
of a long span's, the seconds kept around its peaks: a bin tells no second's answers) and the partition layer's range
splits (the emulator's, a simulation's). ``losses`` names them as OUTAGE findings;
the report marks their seconds. A run that ends unanswered is TARGET_LOST, not an outage.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..bounds.run_span import target_lost
from ..counting.buckets import GROUPS
from ..results import series_frame
from ..results.form import Results
from ..results.rolled_frame import BIN_COLUMN
from ..service.error_codes import THROTTLING_CODES, UNANSWERED
from ..service.operations import OpClass
from .log_outages import by_partition, log_gaps, sparse_seconds

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
    failed: int  # attempts that timed out or went unanswered (or refused, its range offline), up to its answer again
    longest_ms: int  # the longest operation that ended in it or as it came back: how long one waited
    cause: str
    shared: tuple  # what it shares with the other outages of its cause: ("split", i), ("target", start, end) or its own


@dataclass(frozen=True)
class _Seconds:
    """A partition's (or the whole target's) seconds from ``first_t`` (0, or a merged engine's bucket counted before
    the run's start) to the run's last, as arrays: the operations the service answered (successes and 4xx alike), the
    attempts without an answer (unanswered, timed out), the longest operation that ended in each, and the attempts the
    service refused (throttled: answered, if not served); zeros where it had no row."""

    first_t: int
    answered: np.ndarray
    stalled: np.ndarray
    longest_ms: np.ndarray
    refused: np.ndarray


def _rows(results: Results) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray] | None:
    """The per-second rows of each partition and op class (of a long span's, the seconds kept: a bin tells no second's
    answers), and each row's answered, stalled and refused attempts; None where there are none."""
    frame = results.timeseries[results.timeseries["op_class"] != OpClass.ALL]
    frame = frame[frame[BIN_COLUMN] == 1]
    if frame.empty:
        return None
    answered = (frame["requests"] - series_frame.tally(frame, "errors", _STALLED)).to_numpy(np.int64)
    refused = frame["throttled"].to_numpy(np.int64)
    stalled = np.maximum(0, frame["attempts"].to_numpy(np.int64) - answered - refused)
    return frame, answered, stalled, refused


def _seconds(results: Results) -> tuple[Iterator[tuple[str, _Seconds]], _Seconds | None]:
    """Each partition's seconds and the whole target's, as arrays from the per-second rows (not an object a second: an
    hour over 50 keys is 360,000 rows). A partition's are made as the loop asks for them, one at a time: made at once,
    a week of logs over 51 keys held three arrays of 31 million seconds."""
    rows = _rows(results)
    if rows is None:
        return iter(()), None
    frame, answered, stalled, refused = rows
    longest, t = frame["longest_ms"].to_numpy(np.int64), frame["t"].to_numpy(np.int64)
    first_t = min(0, int(t.min()))
    t = t - first_t
    length = int(t.max()) + 1

    def made(at: np.ndarray, rows: np.ndarray | slice) -> _Seconds:
        most = np.zeros(length, dtype=np.int64)
        np.maximum.at(most, at, longest[rows])
        count = lambda values: np.bincount(at, values[rows], minlength=length).astype(np.int64)  # noqa: E731
        return _Seconds(first_t, count(answered), count(stalled), most, count(refused))

    return ((name, made(t[rows], rows)) for name, rows in by_partition(frame)), made(t, slice(None))


def _gaps(seconds: _Seconds, *, offline: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Runs of ``OUTAGE_AFTER_S`` or more seconds with nothing answered, served or refused, while operations waited
    through them (an operation that ended later had started before) or their attempts stalled, after seconds that were
    served: (first, last) each, indexes into ``seconds``' arrays. A second with throttled answers is no outage's: the
    service answered, and THROTTLED names it — unless the partition layer had the range offline then (``offline``, by
    second: a moved range's 503s are its outage). A run's seconds: production's records are read by ``log_outages``."""
    answered, last = seconds.answered, len(seconds.answered) - 1
    served = np.flatnonzero(answered)
    if not len(served):
        return []
    first = int(served[0])
    # an operation that ended in [t, t + 1) started about t + 0.5 - its time: it waited from that second on
    ended = np.flatnonzero(seconds.longest_ms)
    began = np.maximum(first, np.floor(ended + 0.5 - seconds.longest_ms[ended] / 1000.0).astype(np.int64))
    waits = began < ended
    marks = np.zeros(last + 2, dtype=np.int64)
    np.add.at(marks, began[waits], 1)
    np.add.at(marks, ended[waits], -1)
    waited = np.cumsum(marks)[: last + 1] > 0
    evidence = waited | (seconds.stalled > 0)
    out = (answered == 0) & (seconds.refused == 0) & evidence
    if offline is not None:
        out |= (answered == 0) & offline[: last + 1] & (evidence | (seconds.refused > 0))
    out[:first] = False
    edges = np.diff(np.concatenate(([0], out.astype(np.int8), [0])))
    gaps = []
    for start, stop in zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True):
        before = answered[max(first, start - BEFORE_S) : start]
        if stop - start >= OUTAGE_AFTER_S and len(before) and before.sum() / len(before) >= SERVED_BEFORE:
            gaps.append((start, stop - 1))
    return gaps


def _cause(
    results: Results, partition: str, start: int, end: int, target_gap: tuple[int, int] | None, failed: int
) -> tuple[str, tuple]:
    """What the run knows of why, and what the outage shares with others of that cause: the partition layer moved the
    range (that split), the whole target answered nothing (its seconds), only refusals came back, or this partition
    alone stopped while the rest answered."""
    layer = "the simulated partition layer" if results.run.simulated else "the emulator's partition layer"
    if results.logs:
        return (
            f"read from its own records: {failed:,} timed-out or unanswered requests to it in these seconds and none "
            "served or refused, while the rest of the account was served",
            ("partition", partition, start, end),
        )
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
        return "only this partition's operations went unanswered while the rest of the target answered", alone
    return "only this partition's operations waited while the rest of the target answered", alone


def _offline(results: Results, partition: str, seconds: _Seconds) -> np.ndarray | None:
    """The seconds (indexes into ``seconds``' arrays) in which the partition layer had ``partition``'s range offline,
    moving it after a split (the emulator's, a simulation's): None where it never did."""
    splits = [s for s in results.range_splits if s.get("low", "") <= partition and (not s.get("high") or partition < s["high"])]
    if not splits:
        return None
    offline = np.zeros(len(seconds.answered), dtype=bool)
    for split in splits:
        low = max(0, int(split["t"]) - seconds.first_t)
        high = min(len(offline), int(np.ceil(split["offline_until_t"])) - seconds.first_t + 1)
        offline[low:high] = True
    return offline


def outages(results: Results) -> list[Outage]:
    """Every outage of a tracked partition, in time order (those of a target lost at the end left to TARGET_LOST)."""
    if results.logs:
        return _from_records(results)
    parts, whole = _seconds(results)
    if whole is None:
        return []
    lost = target_lost(results)
    target_gaps = [(start + whole.first_t, end + whole.first_t) for start, end in _gaps(whole)]
    found = []
    for partition, seconds in parts:
        if partition in GROUPS:
            continue
        offline = _offline(results, partition, seconds)
        for start, end in _gaps(seconds, offline=offline):
            around = slice(start, end + 2)  # its seconds and the one it answered again in
            start, end = start + seconds.first_t, end + seconds.first_t  # seconds since the run's start
            if lost and end >= lost[0] - 1:
                continue  # the run ended unanswered from then on: TARGET_LOST says so
            failed = int(seconds.stalled[around].sum())
            if offline is not None:  # a moved range's refusals are its outage's
                failed += int(seconds.refused[around][offline[around]].sum())
            target_gap = next(((s, e) for s, e in target_gaps if s <= end and start <= e), None)  # overlapping
            cause, shared = _cause(results, partition, start, end, target_gap, failed)
            found.append(
                Outage(
                    partition=partition,
                    start=start,
                    end=end,
                    failed=failed,
                    longest_ms=int(seconds.longest_ms[around].max()),
                    cause=cause,
                    shared=shared,
                )
            )
    return sorted(found, key=lambda o: (o.start, o.partition))


def _from_records(results: Results) -> list[Outage]:
    """``outages`` of production's records, over the seconds with records only (``log_outages``): a partition's own
    timed-out or unanswered records while the rest of the account was served."""
    rows = _rows(results)
    if rows is None:
        return []
    parts, whole = sparse_seconds(*rows)
    lost, found = target_lost(results), []
    for partition, seconds in parts:
        if partition in GROUPS:
            continue
        for start, end in log_gaps(seconds, after_s=OUTAGE_AFTER_S, before_s=BEFORE_S, served_before=SERVED_BEFORE):
            if not whole.total(whole.answered, start, end + 1) - seconds.total(seconds.answered, start, end + 1):
                continue  # nothing else answered meanwhile either: the logs cannot tell an outage from quiet
            if lost and end >= lost[0] - 1:
                continue
            failed = seconds.total(seconds.stalled, start, end + 2)  # its seconds and the one it answered again in
            cause, shared = _cause(results, partition, start, end, None, failed)
            longest = seconds.most(seconds.longest_ms, start, end + 2)
            found.append(Outage(partition, start, end, failed, longest, cause, shared))
    return sorted(found, key=lambda o: (o.start, o.partition))
