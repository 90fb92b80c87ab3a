"""What a design costs the application's own operations, per second at the peak x growth, from the workload's mix:
point reads and writes are unchanged where the bucket follows from the RowKey; a range scan over one logical key
becomes one query per bucket (requests x N, the same entities, as slow as the slowest bucket); an entity group
transaction holds one PartitionKey, so a batch over buckets splits and commits per bucket; GUID keys make every range
scan a table scan and every batch single operations; more accounts fan every query across keys out to each account.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..service.operations import OPERATIONS
from .designs import Design
from .workload import Workload

__all__ = ["Cost", "OpCost", "cost_of"]


@dataclass(frozen=True)
class OpCost:
    """One operation of the mix under a design: its operations/s at the peak x growth, what happens to it, and the
    requests and entities it adds per second."""

    op: str
    per_s: float
    change: str
    extra_requests_s: float = 0.0
    extra_entities_s: float = 0.0
    batches_split_s: float = 0.0


@dataclass(frozen=True)
class Cost:
    ops: list[OpCost]
    atomicity: str = ""  # what the application's batches lose ("" nothing)
    read_path: str = ""  # which queries fan out and how to merge them
    notes: list[str] = field(default_factory=list)

    @property
    def extra_requests_s(self) -> float:
        return sum(o.extra_requests_s for o in self.ops)

    @property
    def extra_entities_s(self) -> float:
        return sum(o.extra_entities_s for o in self.ops)

    @property
    def batches_split_s(self) -> float:
        return sum(o.batches_split_s for o in self.ops)

    @property
    def score(self) -> float:
        """The one figure designs are ranked by: what the application sends more, requests and entities a second."""
        return self.extra_requests_s + self.extra_entities_s


def _kind(op: str) -> str:
    o = OPERATIONS[op]
    if o.asks == "batch":
        return "batch"
    if o.reach == "range":
        return "range"
    if o.reach in ("partitions", "table"):
        return "across"
    return "point"


def _hot_share(design: Design, current: Design, op: str) -> float:
    """Of ``op``'s operations, the share that address the keys the design spreads (write sharding's hot keys)."""
    base = current.demand
    if base is None or not design.spread_keys:
        return 0.0
    hot = np.isin(np.array(base.keys, dtype=object), np.array(design.spread_keys, dtype=object))
    shares = [float((s.probabilities * base.key_counts)[hot].sum()) for s in base.streams if s.op == op and s.keyed]
    return max(shares, default=0.0)


def cost_of(design: Design, current: Design, workload: Workload) -> Cost:
    """``design``'s cost to each operation of ``workload``'s mix, against ``current`` (its own cost: none)."""
    settings, rate = workload.settings, workload.rate
    total = sum(settings.mix.values())
    batch, scan, table_rows = settings.batch_size, settings.scan_size, max(settings.seed_entities, 1)
    family, n = design.family, design.n
    ops, atomicity, read_path = [], "", ""
    for op, weight in settings.mix.items():
        per_s, kind = rate * weight / total, _kind(op)
        fanned = {"shard": _hot_share(design, current, op), "hash-prefix": 1.0}.get(family, 0.0)
        if family in ("shard", "hash-prefix") and kind == "range" and fanned:
            ops.append(
                OpCost(
                    op,
                    per_s,
                    f"a range scan of a spread key is {n} queries, one per bucket, merged by RowKey: the same entities, "
                    "as slow as the slowest bucket",
                    extra_requests_s=per_s * fanned * (n - 1),
                )
            )
        elif family in ("shard", "hash-prefix") and kind == "batch" and fanned:
            parts = min(n, batch)
            ops.append(
                OpCost(
                    op,
                    per_s,
                    f"a batch of {batch} on a spread key splits into up to {parts} batches, one per bucket",
                    extra_requests_s=per_s * fanned * (parts - 1),
                    batches_split_s=per_s * fanned,
                )
            )
            atomicity = f"a batch commits per bucket: its up to {parts} parts succeed or fail apart (no atomicity across buckets)"
        elif family == "finer" and kind == "range":
            old = int(settings.key_strategy.partition(":")[2] or 1)
            ways = max(1, -(-n // old))
            ops.append(
                OpCost(
                    op,
                    per_s,
                    f"a range scan over what one of the {old:,} values held is up to {ways} queries over finer values",
                    extra_requests_s=per_s * (ways - 1),
                )
            )
        elif family == "seconds-first" and kind == "range":
            ops.append(
                OpCost(
                    op,
                    per_s,
                    "a scan of a time range is up to 60 queries, one per second of the minute (seconds lead the key)",
                    extra_requests_s=per_s * 59,
                )
            )
        elif family == "guid" and kind == "range":
            ops.append(
                OpCost(
                    op,
                    per_s,
                    f"a range scan is a table scan: every entity of the table ({table_rows:,} seeded; more as it grows) "
                    f"read for the {scan:,} it wants",
                    extra_entities_s=per_s * max(0, table_rows - scan),
                )
            )
        elif family == "guid" and kind == "batch":
            ops.append(
                OpCost(
                    op,
                    per_s,
                    f"no batch holds two GUID keys: each batch of {batch} is {batch} single operations",
                    extra_requests_s=per_s * (batch - 1),
                    batches_split_s=per_s,
                )
            )
            atomicity = "no two entities commit together: every batch's atomicity is lost"
        elif family == "accounts" and kind == "across":
            ops.append(
                OpCost(
                    op,
                    per_s,
                    f"a query across keys is {n} queries, one per account, merged",
                    extra_requests_s=per_s * (n - 1),
                )
            )
        else:
            same = "unchanged" + (": the partition follows from the keys it has" if kind == "point" else "")
            ops.append(OpCost(op, per_s, same))
    if family in ("shard", "hash-prefix"):
        read_path = (
            "point reads and writes compute the bucket from the RowKey (one partition); range scans of a spread key "
            "query every bucket in parallel and merge the answers by RowKey"
        )
    elif family == "guid":
        read_path = "point reads need the entity's GUID (keep it where the application finds it); range scans read the table"
    elif family == "seconds-first":
        read_path = "a time range is read as one query per second-of-minute prefix, merged by time"
    elif family == "accounts":
        read_path = "each entity's account follows from a hash of its PartitionKey; queries across keys ask every account"
    elif family == "finer":
        read_path = "an entity's value follows from its own identity (a hash); scans over an old value ask each finer one"
    return Cost(ops=ops, atomicity=atomicity, read_path=read_path)
