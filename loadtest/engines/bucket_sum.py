"""Engines' buckets added column by column: one dense array per counter, indexed by (second, partition, op class),
that each engine's frame is added into with ``np.add.at`` — some milliseconds an engine-hour, where a ``Bucket``
object per row took seconds.

The partitions are known before any bucket is read: the run's top keys (from every engine's key sketch, merged
first) and the groups. A partition outside them is added into ``OTHER`` as it is read, and its entities counted by
(second, first key character), as ``summary.counted`` would fold it afterwards: so the arrays hold seconds × (top keys
+ groups) × op classes whatever the engines kept apart, and the sum is exact for every key they hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..counting.bucket_frame import KEYS, TALLIES, column_of, tally_of, tally_text
from ..counting.buckets import COUNTERS, GROUPS, OTHER
from ..exit_codes import UsageError
from ..results.series_schema import LATE_S, MAX_SPAN_S
from ..service.operations import OpClass

__all__ = ["BucketSum"]

_ADDED = (*COUNTERS, "longest_ms")
#: Seconds a bucket may lie before the engines' first start or after their last stop (a report counted late); one
#: further out is not of this run (and would grow the arrays without bound).
SLACK_S = LATE_S


class BucketSum:
    """The engines' buckets so far, over the seconds ``first`` to ``last`` (grown if a bucket lies outside)."""

    def __init__(self, keep: Iterable[str], first: int, last: int) -> None:
        if last - first + 1 > MAX_SPAN_S:  # an array cell a second: each engine's clock is in bounds, not together
            raise UsageError(
                f"the engines' clocks span {last - first + 1:,} s, from {first:,} to {last:,} (seconds since 1970): more"
                f" than {MAX_SPAN_S:,} s, the most the tool reads of one run; merge one run's engines"
            )
        self.partitions = sorted(set(keep) | GROUPS)
        self._code = {partition: i for i, partition in enumerate(self.partitions)}
        self.op_classes = [str(op) for op in OpClass]
        self.first, self.seconds = first, max(1, last - first + 1)
        self.bounds = (first - SLACK_S, first + self.seconds - 1 + SLACK_S)
        self._sums = {name: np.zeros(self._cells(self.seconds), dtype=np.int64) for name in _ADDED}
        self._held = np.zeros(self._cells(self.seconds), dtype=bool)  # a cell some engine had a bucket in
        self._tallies: dict[int, dict[str, Counter[str]]] = {}  # cell -> errors / throttled_by (rare: kept apart)
        self.ranges: Counter[tuple[int, str]] = Counter()  # (second, first key character) -> folded entities

    def _cells(self, seconds: int) -> int:
        return seconds * len(self.partitions) * len(self.op_classes)

    def add(self, buckets: pa.Table | pd.DataFrame) -> None:
        """One engine's buckets (``bucket_frame``'s columns; Arrow's, as ``bucket_frame.read_table`` gives them, or a
        frame's): a ``ValueError`` says what in them cannot be added."""
        table = buckets if isinstance(buckets, pa.Table) else pa.Table.from_pandas(buckets, preserve_index=False)
        if not table.num_rows:
            return
        seconds = _integers(table, KEYS[0])
        self._fit(int(seconds.min()), int(seconds.max()))
        partition, named = _coded(table, KEYS[1])
        codes = np.array([self._code.get(p, -1) for p in named], dtype=np.int64)[partition]
        folded = codes < 0
        if folded.any():
            texts = np.asarray(named, dtype=object)[partition[folded]]
            self._fold(seconds[folded], texts, _integers(table, "entities")[folded])
            codes[folded] = self._code[OTHER]
        op, ops = _coded(table, KEYS[2])
        op_codes = np.array([self._op_code(o) for o in ops], dtype=np.int64)[op]
        cell = ((seconds - self.first) * len(self.partitions) + codes) * len(self.op_classes) + op_codes
        for name in COUNTERS:  # whole numbers added as such (exact at any size); a cell given twice adds twice
            values = _integers(table, name)
            if values.any():
                np.add.at(self._sums[name], cell, values)
        np.maximum.at(self._sums["longest_ms"], cell, _integers(table, "longest_ms"))
        self._held[cell] = True
        for name in TALLIES:  # rare: only the rows that hold one are read, each text once
            codes, texts = _coded(table, name)
            tallies = [tally_of(name, text) if text else None for text in texts]
            for i in np.flatnonzero(np.array([bool(text) for text in texts], dtype=bool)[codes]):
                self._tallies.setdefault(int(cell[i]), {}).setdefault(name, Counter()).update(tallies[codes[i]])

    def _op_code(self, op_class: str) -> int:
        if op_class not in self.op_classes:
            raise ValueError(f"op class {op_class!r}: not one of {', '.join(self.op_classes)}")
        return self.op_classes.index(op_class)

    def _fold(self, seconds: np.ndarray, partitions: np.ndarray, entities: np.ndarray) -> None:
        """Partitions outside the kept ones, into ``OTHER``: their entities by (second, the key range they fall in)."""
        starts = pd.Series(partitions).str[:1].to_numpy()
        sums = pd.Series(entities).groupby([seconds, starts]).sum()
        self.ranges.update({(int(second), str(start)): int(n) for (second, start), n in sums.items() if n})

    def _fit(self, low: int, high: int) -> None:
        """Grow the arrays to hold seconds ``low`` to ``high`` (a bucket before or after the engines' clocks), within
        ``SLACK_S`` of them."""
        if low < self.bounds[0] or high > self.bounds[1]:
            wrong = low if low < self.bounds[0] else high
            raise ValueError(
                f"second {wrong}: more than {SLACK_S} s outside the engines' clocks ({self.bounds[0] + SLACK_S}"
                f" to {self.bounds[1] - SLACK_S})"
            )
        before, after = max(0, self.first - low), max(0, high - (self.first + self.seconds - 1))
        if not before and not after:
            return
        per_second = self._cells(1)
        for name, values in self._sums.items():
            self._sums[name] = np.pad(values, (before * per_second, after * per_second))
        self._held = np.pad(self._held, (before * per_second, after * per_second))
        self._tallies = {cell + before * per_second: tallies for cell, tallies in self._tallies.items()}
        self.first, self.seconds = self.first - before, self.seconds + before + after

    def frame(self) -> pd.DataFrame:
        """The sum as ``bucket_frame``'s frame: a row per cell some engine had a bucket in, sorted by key."""
        cells = np.flatnonzero(self._held)
        second, rest = np.divmod(cells, self._cells(1))
        partition, op = np.divmod(rest, len(self.op_classes))
        columns: dict[str, object] = {
            KEYS[0]: second + self.first,
            KEYS[1]: np.asarray(self.partitions, dtype=object)[partition],
            KEYS[2]: np.asarray(self.op_classes, dtype=object)[op],
        }
        columns.update({name: self._sums[name][cells] for name in _ADDED})
        tallied = np.flatnonzero(np.isin(cells, np.fromiter(self._tallies, dtype=np.int64, count=len(self._tallies))))
        for name in TALLIES:  # "" but in the few cells that counted one
            texts = np.full(len(cells), "", dtype=object)
            for i in tallied:
                texts[i] = tally_text(self._tallies[int(cells[i])].get(name, {}))
            columns[name] = texts
        frame = pd.DataFrame(columns)
        return frame.sort_values(list(KEYS), kind="stable", ignore_index=True)


def _integers(table: pa.Table, name: str) -> np.ndarray:
    return column_of(table, name, "whole").to_numpy()


def _coded(table: pa.Table, name: str) -> tuple[np.ndarray, list[str]]:
    """A column of text as (codes, the texts they index): Parquet's dictionary as it was read, else one made."""
    column = column_of(table, name, "text")
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not pa.types.is_dictionary(array.type):
        array = pc.dictionary_encode(array)
    return array.indices.to_numpy(zero_copy_only=False).astype(np.int64), [str(t) for t in array.dictionary.to_pylist()]
