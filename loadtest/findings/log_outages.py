"""Outages read from production's records, over the seconds that have records only: a month of logs is 2.6 million
seconds, and arrays of every second (five of them, the whole account's and a partition's at a time) held some 200 MB
at its end (``bench/traffic_span.py``: the peak grew 9 MB a day). From records an outage needs timed-out or unanswered
records of its own in each of its seconds (a gap between records is no evidence: ``outages._gaps`` with ``records``),
so only the seconds with rows can be in one: these are read as sorted arrays, what ``_gaps`` reads as dense ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Sparse", "by_partition", "log_gaps", "sparse_seconds"]


@dataclass(frozen=True)
class Sparse:
    """A partition's (or the whole account's) seconds with rows, in order (``t``: from the span's start), and what each
    held: answered, stalled (timed out or unanswered), the longest operation, refused (throttled)."""

    t: np.ndarray
    answered: np.ndarray
    stalled: np.ndarray
    longest_ms: np.ndarray
    refused: np.ndarray

    def total(self, values: np.ndarray, start: int, stop: int) -> int:
        """``values`` summed over the seconds in [start, stop)."""
        low, high = np.searchsorted(self.t, [start, stop])
        return int(values[low:high].sum())

    def most(self, values: np.ndarray, start: int, stop: int) -> int:
        low, high = np.searchsorted(self.t, [start, stop])
        return int(values[low:high].max()) if high > low else 0


def _per_second(t: np.ndarray, answered: np.ndarray, stalled: np.ndarray, longest: np.ndarray, refused: np.ndarray) -> Sparse:
    seconds, inverse = np.unique(t, return_inverse=True)
    add = lambda values: np.bincount(inverse, values, minlength=len(seconds)).astype(np.int64)  # noqa: E731
    most = np.zeros(len(seconds), dtype=np.int64)
    np.maximum.at(most, inverse, longest)
    return Sparse(seconds, add(answered), add(stalled), most, add(refused))


def by_partition(frame: pd.DataFrame) -> Iterator[tuple[str, np.ndarray]]:
    """Each partition of the per-second rows, in key order, with the indexes of its rows (one at a time: a partition's
    arrays are made as the loop asks for them)."""
    codes, names = pd.factorize(frame["partition"], sort=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    for i, name in enumerate(names):
        yield str(name), order[bounds[i] : bounds[i + 1]]


def sparse_seconds(
    frame: pd.DataFrame, answered: np.ndarray, stalled: np.ndarray, refused: np.ndarray
) -> tuple[Iterator[tuple[str, Sparse]], Sparse]:
    """Each partition's seconds with rows, one at a time, and the whole account's (``frame``: the per-second rows,
    their answered, stalled and refused attempts beside it)."""
    t, longest = frame["t"].to_numpy(np.int64), frame["longest_ms"].to_numpy(np.int64)
    each = (
        (name, _per_second(t[rows], answered[rows], stalled[rows], longest[rows], refused[rows]))
        for name, rows in by_partition(frame)
    )
    return each, _per_second(t, answered, stalled, longest, refused)


def log_gaps(seconds: Sparse, *, after_s: int, before_s: int, served_before: float) -> list[tuple[int, int]]:
    """Runs of ``after_s`` or more consecutive seconds in which the partition's records were all timed out or
    unanswered (nothing answered, served or refused), after ``before_s`` seconds in which it was served
    ``served_before`` operations a second or more: [start, end] each, from the span's start."""
    t, answered = seconds.t, seconds.answered
    served = np.flatnonzero(answered)
    if not len(served):
        return []
    first = int(t[served[0]])
    out = (answered == 0) & (seconds.refused == 0) & (seconds.stalled > 0) & (t >= first)
    at = np.flatnonzero(out)
    if not len(at):
        return []
    breaks = np.flatnonzero(np.diff(t[at]) != 1) + 1  # a second between two silent ones had no row: not silent
    gaps = []
    for run in np.split(at, breaks):
        start, end = int(t[run[0]]), int(t[run[-1]])
        low = max(first, start - before_s)
        if end - start + 1 >= after_s and start > low and seconds.total(answered, low, start) / (start - low) >= served_before:
            gaps.append((start, end))
    return gaps
