"""The one table of table operations: each one's op class, request name and what the transports need.

Everything else reads it: ``--mix`` and ``--batch-mix`` validation, the session (request names, op classes),
the transports (the SDK's call and update mode), the users' dispatch (the method marked ``performs`` for each
mix operation), the emulator's and report's wording. An operation added here is an operation everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["BATCH_OPERATIONS", "MIX_OPERATIONS", "OPERATIONS", "OpClass", "Operation"]


class OpClass(StrEnum):
    """The service's two targets count GETs and PUTs; ALL is a partition's both together."""

    GET = "GET"
    PUT = "PUT"
    ALL = "ALL"


@dataclass(frozen=True)
class Operation:
    name: str  # as --mix and --batch-mix name it
    op_class: OpClass
    request_name: str  # Locust's request name: low cardinality, never a PartitionKey
    doc: str
    action: str = ""  # the SDK's verb: create, upsert, update, delete (the same inside a batch)
    mode: str = ""  # merge | replace: how an upsert or update writes
    in_batch: bool = False  # may stand inside an entity group transaction
    reach: str = ""  # a read's kind (query_reach.REACHES): point, range, partitions, table; "" for a write
    in_mix: bool = True  # --mix may name it (the application's own queries are tasks of a user class)
    asks: str = "one"  # the entities it asks for: one, batch (--batch-size of them), scan (--scan-size rows at most)
    reads_first: bool = False  # a point read (one GET entity) before its write
    new_keys: bool = False  # its PartitionKey is the key strategy's next new one (inserts), not a seeded entity's

    def demand(self, *, batch_size: int, scan_rows: int) -> tuple[tuple[OpClass, int], ...]:
        """The entities it asks for by op class, as the targets count them, known before it is sent: an open loop's
        demand of a slot never sent, the simulator's of each operation."""
        n = batch_size if self.asks == "batch" else scan_rows if self.asks == "scan" else 1
        return ((OpClass.GET, 1), (self.op_class, n)) if self.reads_first else ((self.op_class, n),)


_GET, _PUT = OpClass.GET, OpClass.PUT
OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("read", _GET, "GET point read", "point read (PartitionKey + RowKey)", reach="point"),
        Operation("scan", _GET, "GET row range scan", "row range scan inside a partition", reach="range", asks="scan"),
        Operation(
            "filter-scan",
            _GET,
            "GET filtered row range scan",
            "row range scan with a property filter: scans more than it returns",
            reach="range",
            asks="scan",
        ),
        Operation("partition-scan", _GET, "GET partition range scan", "PartitionKey range scan", reach="partitions", asks="scan"),
        Operation(
            "table-scan", _GET, "GET full table scan", "full table scan (bounded by --scan-size)", reach="table", asks="scan"
        ),
        Operation(
            "query",
            _GET,
            "GET query",
            "the application's own OData filter (self.table.query in a user class's task)",
            in_mix=False,
        ),
        Operation("insert", _PUT, "PUT insert", "insert a new entity", "create", in_batch=True, new_keys=True),
        Operation("upsert", _PUT, "PUT upsert merge", "upsert, merge mode", "upsert", "merge", in_batch=True),
        Operation("replace", _PUT, "PUT upsert replace", "upsert, replace mode", "upsert", "replace", in_batch=True),
        Operation(
            "update",
            _PUT,
            "PUT update merge",
            "update (merge) of an existing entity, If-Match *",
            "update",
            "merge",
            in_batch=True,
        ),
        Operation(
            "update-etag",
            _PUT,
            "PUT update merge If-Match etag",
            "read, then update only if the ETag still matches (optimistic concurrency)",
            "update",
            "merge",
            reads_first=True,
        ),
        Operation("delete", _PUT, "PUT delete", "delete an entity the user inserted", "delete", in_batch=True, new_keys=True),
        Operation(
            "batch",
            _PUT,
            "PUT batch upsert",
            "entity group transaction of --batch-size operations (--batch-mix)",
            asks="batch",
            new_keys=True,
        ),
    )
}
BATCH_OPERATIONS = tuple(name for name, op in OPERATIONS.items() if op.in_batch)
MIX_OPERATIONS = tuple(name for name, op in OPERATIONS.items() if op.in_mix)
