"""One second's counts of one partition and op class: what the metrics count, the summary adds up and
timeseries.csv writes, column by column.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "COUNTERS",
    "GROUPS",
    "NEWEST",
    "OLDEST",
    "OTHER",
    "UNATTRIBUTED",
    "UNATTRIBUTED_DEMAND",
    "Bucket",
    "BucketKey",
    "fold",
    "named",
]

OTHER = "#other"  # the untracked partitions together; '#' is forbidden in keys, so never a real PartitionKey
UNATTRIBUTED = "#unattributed"  # logged requests whose records name no partition (inserts, batches): ``loadtest traffic``
#: How a replay places demand that named no partition (``simulate --traffic``): as the attributed demand of its op
#: class is (the same keys: the cautious reading), or apart (each operation a key of its own: never a hot partition).
UNATTRIBUTED_DEMAND = ("spread", "apart")
#: Rows of several partitions together, never one partition: no partition target applies, none is folded into another.
GROUPS = frozenset({OTHER, UNATTRIBUTED})
#: The ranges where ordered new keys land (``key_edges``): judged as one partition each, never a bucket row.
NEWEST, OLDEST = "#newest", "#oldest"
_GROUP_WORDS = {
    OTHER: "the other partitions",
    UNATTRIBUTED: "requests naming no partition (inserts and batches)",
    NEWEST: "the range where new keys land (at or past the largest key written before)",
    OLDEST: "the range where new keys land (at or before the smallest key written before)",
}


def named(partition: str) -> str:
    """A partition as findings name it: its key quoted, or what a group holds."""
    return _GROUP_WORDS.get(partition) or repr(partition)


#: What each second of a partition and op class counts (the metrics' buckets, timeseries.csv's columns).
COUNTERS = (
    "requests",
    "failures",
    "entities",
    "offered",
    "estimated",
    "attempts",
    "throttled",
    "backoff_ms",
    "scheduled",
    "late",
    "dropped",
    "unsent",
    "rows",
)

BucketKey = tuple[int, str, str]  # (second, partition, op class)


@dataclass(slots=True)
class Bucket:
    """One second of one op class on one partition (or on the ``OTHER`` partitions together)."""

    requests: int = 0
    failures: int = 0
    entities: int = 0  # served: entities of operations that succeeded
    offered: int = 0  # asked for: every operation's entities, failed ones included (open loop: in the second it was due)
    estimated: int = 0  # of the entities, those counted from what the run knows (filtered scans)
    attempts: int = 0
    throttled: int = 0
    backoff_ms: int = 0  # time the retry strategy spent waiting
    scheduled: int = 0  # open loop: operations sent with a time they were due
    late: int = 0  # of those, started LATE_MS or more after it
    dropped: int = 0  # slots dropped: overdue by more than a gap when their user was free
    unsent: int = 0  # their entities: demand never sent (with ``offered``, an open loop's whole demand)
    rows: int = 0  # rows the table gained: acknowledged new entities less acknowledged deletes (its size over time)
    longest_ms: int = 0  # the longest an operation that ended this second took: how long it waited (outages)
    errors: Counter[str] = field(default_factory=Counter)
    throttled_by: Counter[str] = field(default_factory=Counter)  # throttled attempts by reason (service_errors)

    @property
    def demand(self) -> int:
        """Entities asked for: sent (served or not) and, in an open loop, never sent."""
        return self.offered + self.unsent

    def to_dict(self) -> dict[str, Any]:
        return {
            **{name: getattr(self, name) for name in COUNTERS},
            "longest_ms": self.longest_ms,
            "errors": dict(self.errors),
            "throttled_by": dict(self.throttled_by),
        }

    def merge(self, data: Mapping[str, Any]) -> None:
        """Add a bucket's ``to_dict`` form (from a worker)."""
        for name in COUNTERS:
            setattr(self, name, getattr(self, name) + data.get(name, 0))
        self.longest_ms = max(self.longest_ms, data.get("longest_ms", 0))
        self.errors.update(data.get("errors", {}))
        self.throttled_by.update(data.get("throttled_by", {}))

    def add(self, other: Bucket) -> None:
        self.merge(other.to_dict())


def fold(
    buckets: Mapping[BucketKey, Bucket], *, keep: frozenset[str], before: int
) -> tuple[dict[BucketKey, Bucket], Counter[tuple[int, str]]]:
    """New buckets where seconds before ``before`` keep only the ``keep`` keys apart; the rest are added
    into ``OTHER``. Also the folded entities by (second, first key character): the key range they fall in.
    """
    out: dict[BucketKey, Bucket] = {}
    ranges: Counter[tuple[int, str]] = Counter()
    for key, bucket in buckets.items():
        second, partition, op_class = key
        if second < before and partition not in keep and partition not in GROUPS:
            key = (second, OTHER, op_class)
            ranges[(second, partition[:1])] += bucket.entities
        into = out.get(key)
        if into is None:
            into = out[key] = Bucket()
        into.add(bucket)
    return out, ranges
