"""The records' evidence for the docs' checklist, in a run's ``workload`` form (``request_profile``), so the same
checklist judges it: per request name — the operation as the service logs it, a query's with its reach — requests,
failures, entities returned (a query's estimated from its answer's size) and reads with no ``$select`` in their URI.
Where keys fall in key order is the counts' (``counting.key_edges``), as for a run.

What the records do not carry stays zero, so its findings are not raised: the entities a query scanned (no query
density), the client that sent a write (no unbatched writes: a caller's address is not a client) and whether that
client had just read the entity (no read before write).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..counting.request_evidence import RequestProfile
from .attribution import QUERY

__all__ = ["LEAVES_OUT", "LoggedWorkload"]

LEAVES_OUT = "query density, unbatched writes and reads before writes (the records name no client and no scanned rows)"
#: The tool's operation for a logged one (a query's by its reach), as a run's request names carry it.
_OPERATIONS = {
    "QueryEntity": "read",
    "InsertEntity": "insert",
    "InsertOrMergeEntity": "upsert",
    "InsertOrReplaceEntity": "upsert",
    "UpdateEntity": "replace",
    "MergeEntity": "update",
    "DeleteEntity": "delete",
    "EntityGroupTransaction": "batch",
}
_QUERIES = {"point": "read", "range": "scan", "partitions": "partition-scan", "table": "table-scan", "": "scan"}
_KEY = ["operation", "reach", "op_class"]


class LoggedWorkload:
    """The checklist's evidence, counted a block of records at a time (first attempts: one a request)."""

    def __init__(self) -> None:
        self.profile = RequestProfile(clock=lambda: 0.0)
        self._point_bytes = 0  # point reads' answers: the entity's size as the service sends it
        self._point_reads = 0

    def add(self, records: pa.Table, said: pa.Table, first: np.ndarray, failed: np.ndarray, succeeded: np.ndarray) -> None:
        """A counted block: ``records`` and what ``attribution.attribute`` said of them, with each record's
        first-attempt, failed and succeeded flags (``Tally``'s)."""
        get = pc.equal(said["op_class"], "GET").to_numpy(zero_copy_only=False)
        entities, estimated = said["entities"].to_numpy(), said["estimated"].to_numpy(zero_copy_only=False)
        rows = pa.table(
            {
                "operation": records["operation"],
                "reach": pc.if_else(pa.array(get), said["reach"], ""),
                "op_class": said["op_class"],
                "requests": first.astype(np.int64),
                "failures": (first & failed).astype(np.int64),
                "returned": np.where(get & succeeded, entities, 0),
                "estimated": np.where(get & succeeded & estimated, entities, 0),
                "unprojected": (first & get & ~said["projected"].to_numpy(zero_copy_only=False)).astype(np.int64),
            }
        )
        sums = ("requests", "failures", "returned", "estimated", "unprojected")
        grouped = rows.group_by(_KEY, use_threads=False).aggregate([(name, "sum") for name in sums])
        names: dict[str, dict[str, Any]] = {}
        for row in grouped.to_pylist():
            operation, reach = row["operation"], row["reach"]
            if not row["requests_sum"]:
                continue
            query = operation == QUERY
            name = f"{operation} ({reach or 'unread filter'})" if query else operation
            counts = names.setdefault(name, {"op": _QUERIES[reach] if query else _OPERATIONS.get(operation, operation)})
            counts |= {"op_class": row["op_class"], "reach": counts.get("reach") or reach, "scanned": 0, "after_read": 0}
            for total in sums:  # a point read whose address did not parse is still the operation's
                counts[total] = counts.get(total, 0) + row[f"{total}_sum"]
        self.profile.merge({"names": names, "totals": {}})
        point = first & succeeded & pc.equal(records["operation"], "QueryEntity").to_numpy(zero_copy_only=False)
        if point.any():
            sizes = pc.fill_null(records["response_body"], 0).to_numpy(zero_copy_only=False)[point]
            self._point_bytes += int(sizes.sum())
            self._point_reads += int(point.sum())

    def entity_bytes(self) -> int | None:
        """An entity's size as its point reads' answers carried it (their mean), or None without one."""
        return round(self._point_bytes / self._point_reads) if self._point_reads else None

    def figures(self) -> dict[str, Any]:
        return self.profile.figures()
