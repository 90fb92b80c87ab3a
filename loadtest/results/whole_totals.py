"""Each named key's totals made whole: the counts of the seconds it was not kept apart (``counting.folded_totals``:
folded into the other partitions, by the count itself or by a part a merge adds) added to its rows and taken from
the other partitions' rows, which held them. A key's requests, entities, attempts, throttled attempts and errors are
then its whole count, whichever seconds each count kept apart; its peak and means are of the seconds kept apart, and
the row says so (``partial``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from ..counting.buckets import GROUPS, OTHER, Bucket
from ..counting.folded_totals import TOTALLED, FoldedTotals
from ..service.operations import OpClass
from .rows import PartitionRow

__all__ = ["made_whole"]


def made_whole(rows: Iterable[PartitionRow], folded: FoldedTotals, top: Iterable[str], target: int) -> list[PartitionRow]:
    """``rows`` (``summary.partition_rows``) with each named key's folded counts added (a key is named where it has a
    row or is among the ``top`` keys), the other partitions' less by as much. A key whose op class folded in every
    second it had gets that class's row (no second of it to judge: its rates 0), and an ALL row where it now has two:
    one of the heaviest keys kept apart by no part is named as one read names it. In ``partition_rows``' order."""
    rows = list(rows)
    named = {row.partition for row in rows if row.partition not in GROUPS} | (set(top) - GROUPS)
    per_key: dict[str, dict[str, Bucket]] = defaultdict(dict)
    for (partition, op_class), total in folded.totals.items():
        if partition in named:
            per_key[partition][op_class] = total
    if not per_key:
        return rows
    by_key = {(row.partition, row.op_class): row for row in rows}
    for partition, classes in per_key.items():
        for op_class, total in classes.items():
            row = by_key.get((partition, OpClass(op_class)))
            if row is None:
                row = by_key[(partition, OpClass(op_class))] = _empty(partition, OpClass(op_class), target)
            _add(row, total)
            other = by_key.get((OTHER, OpClass(op_class)))
            if other is not None:
                _add(other, total, sign=-1)
        own = [row for (key, op_class), row in by_key.items() if key == partition and op_class != OpClass.ALL]
        whole = by_key.get((partition, OpClass.ALL))
        if whole is not None:
            for total in classes.values():
                _add(whole, total)
        elif len(own) > 1:  # a class made here: the key's ALL row, its rates those of the class that had seconds
            judged = max(own, key=lambda row: row.peak_eps)
            whole = by_key[(partition, OpClass.ALL)] = replace(judged, op_class=OpClass.ALL, errors={}, throttled_by={})
            for name in TOTALLED:
                setattr(whole, name, sum(getattr(row, name) for row in own))
            for row in own:
                _tally(whole, row.errors, row.throttled_by)
    return sorted(by_key.values(), key=lambda row: (row.op_class == OpClass.ALL, row.partition, row.op_class))


def _empty(partition: str, op_class: OpClass, target: int) -> PartitionRow:
    return PartitionRow(
        partition=partition, op_class=op_class, requests=0, entities=0, mean_eps=0.0, peak_eps=0.0, target=target, ratio=0.0
    )


def _add(row: PartitionRow, total: Bucket, sign: int = 1) -> None:
    for name in TOTALLED:
        setattr(row, name, max(0, getattr(row, name) + sign * getattr(total, name)))
    if sign > 0:
        _tally(row, total.errors, total.throttled_by)
        return
    for tally, taken in ((row.errors, total.errors), (row.throttled_by, total.throttled_by)):
        for code, n in taken.items():
            left = tally.get(code, 0) - n
            if left > 0:
                tally[code] = left
            else:
                tally.pop(code, None)


def _tally(row: PartitionRow, errors: dict[str, int], throttled_by: dict[str, int]) -> None:
    for tally, added in ((row.errors, errors), (row.throttled_by, throttled_by)):
        for code, n in added.items():
            tally[code] = tally.get(code, 0) + n
