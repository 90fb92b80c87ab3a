"""What a count folded into the other partitions, key by key: the counts of every second a key was not kept apart
(``RunCounts.compact`` folds them into ``OTHER``), summed per partition and op class. A key named later, by the
count's own summary or by a merge of parts that each kept other keys apart, then carries its whole count: its totals
are exact, and only its per-second figures (its peak, its means) lack the folded seconds (``partial``).

Bounded: totals for up to ``KEYS_TOTALLED`` keys. A count that folds more (many keys, each light) keeps totalling the
keys it holds and those it keeps apart at that moment (``kept_when_full``); any other key it names later may lack
folded seconds it did not total, and is taken to (``exact`` is false). A snapshot lists the ``KEYS_LISTED`` keys that
folded most; past them, it hands over the keys it kept apart and listed, so that a merge knows which keys it cannot
make exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .buckets import Bucket

__all__ = ["KEYS_LISTED", "KEYS_TOTALLED", "TOTALLED", "FoldedTotals"]

#: The counts a folded bucket adds to its key's totals, and a named row's totals take from them (``whole_totals``).
TOTALLED = ("requests", "entities", "offered", "estimated", "failures", "attempts", "throttled")

#: Keys whose folded counts are summed: some 30 MB at most (a bucket of totals per key and op class).
KEYS_TOTALLED = 50_000
#: Keys a snapshot (an engine's results.json) lists with their folded counts, those that folded most first.
KEYS_LISTED = 10_000


class FoldedTotals:
    """(partition, op class) -> the counts of its seconds folded into ``OTHER``: a bucket of the sums a named row adds
    (requests, entities, attempts, throttled attempts, failures, errors and throttled attempts by reason)."""

    def __init__(self) -> None:
        self.totals: dict[tuple[str, str], Bucket] = {}
        self.partitions: set[str] = set()  # every key totalled (some of whose seconds folded)
        #: each count that filled (this one, or a part merged into it): the keys it kept apart or totalled then
        self.kept_when_full: list[frozenset[str]] = []
        self._filled: frozenset[str] | None = None  # this count's, when it filled

    def add(self, partition: str, op_class: str, bucket: Bucket, kept: Callable[[], frozenset[str]]) -> None:
        """A bucket of ``partition`` folded: its counts added to the key's totals. Past ``KEYS_TOTALLED`` keys, a new one
        is totalled only where the count kept it apart when it filled (``kept``: those keys, asked once)."""
        if partition not in self.partitions:
            if len(self.partitions) >= KEYS_TOTALLED:
                if self._filled is None:
                    self._filled = kept() | frozenset(self.partitions)
                    self.kept_when_full.append(self._filled)
                if partition not in self._filled:
                    return
            self.partitions.add(partition)
        total = self.totals.get((partition, op_class))
        if total is None:
            total = self.totals[(partition, op_class)] = Bucket()
        # ``TOTALLED``, added field by field (not by name: once a folded bucket, in the compaction beside the users)
        total.requests += bucket.requests
        total.failures += bucket.failures
        total.entities += bucket.entities
        total.offered += bucket.offered
        total.estimated += bucket.estimated
        total.attempts += bucket.attempts
        total.throttled += bucket.throttled
        if bucket.errors:
            total.errors.update(bucket.errors)
        if bucket.throttled_by:
            total.throttled_by.update(bucket.throttled_by)

    def partial(self, partition: str) -> bool:
        """Whether a key lacks seconds folded into the other partitions: totalled here, or not kept by a count that
        filled."""
        return partition in self.partitions or not self.exact(partition)

    def exact(self, partition: str) -> bool:
        """Whether every folded count of the key is in its totals (no count that filled left it out)."""
        return all(partition in kept for kept in self.kept_when_full)

    def of(self, partition: str, op_class: str) -> Bucket | None:
        """The key's folded counts in one op class, if any folded."""
        return self.totals.get((partition, op_class))

    def snapshot(self, kept: frozenset[str]) -> dict[str, Any]:
        """The keys that folded most (``KEYS_LISTED``), each op class's folded counts (``Bucket.to_dict``), and what
        each count that filled kept. Where more keys folded than are listed, the listed ones and ``kept`` (the keys the
        count kept apart) are added as one more: a merge takes any other key it names to lack folded seconds."""
        weight: dict[str, int] = {}
        for (partition, _), total in self.totals.items():
            weight[partition] = weight.get(partition, 0) + total.entities + total.requests
        listed = set(sorted(weight, key=lambda p: (-weight[p], p))[:KEYS_LISTED])
        kept_when_full = [sorted(kept_then) for kept_then in self.kept_when_full]
        if len(listed) < len(weight):  # a key kept apart now that folded before, unlisted, is not among them
            kept_when_full.append(sorted(listed | (kept - weight.keys())))
        rows = [[p, op_class, total.to_dict()] for (p, op_class), total in sorted(self.totals.items()) if p in listed]
        return {"rows": rows, "kept_when_full": kept_when_full}

    def merge(self, data: Mapping[str, Any] | None, kept: Callable[[], frozenset[str]]) -> None:
        """Add a snapshot's folded counts (a worker's, an engine's, a shard's)."""
        if not data:
            return
        for partition, op_class, counts in data.get("rows", ()):
            bucket = Bucket()
            bucket.merge(counts)
            self.add(partition, op_class, bucket, kept)
        self.kept_when_full.extend(frozenset(k) for k in data.get("kept_when_full", ()))

    def note(self, partitions: Iterable[str]) -> None:
        """Keys a part said folded without their counts (a results.json written before they were handed over):
        partial, their folded counts unknown."""
        self.partitions.update(partitions)
