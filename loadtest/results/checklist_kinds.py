"""The docs' performance checklist as finding kinds, each the practice it stands for (``findings.checklist`` detects
them from the request profile): declared here whole, part of ``finding_kinds.KINDS``.
"""

from __future__ import annotations

from .finding_names import FindingKind, K, Kind, S

__all__ = ["CHECKLIST_KINDS"]


CHECKLIST_KINDS: dict[FindingKind, Kind] = {
    K.SCANS: Kind(
        severity=S.ADVICE,
        means='more than 10 % of GET requests were partition range or full table scans ("point queries mostly, table '
        'queries sparingly")',
        remedy="Use point queries (PartitionKey and RowKey) for most reads and table or partition range queries "
        "sparingly: denormalize or keep an index entity so that the application reads what it needs by key.",
        practice=True,
        fail_on=True,
    ),
    K.LOW_QUERY_DENSITY: Kind(
        severity=S.ADVICE,
        means="a request name returned under 10 % of the entities it scanned",
        remedy="Make the query scan what it returns: put what it filters on into the PartitionKey or RowKey (or an index "
        "entity), so the key conditions select the rows instead of a property filter.",
        practice=True,
        fail_on=True,
    ),
    K.NO_PROJECTION: Kind(
        severity=S.ADVICE,
        means="half of the GET requests or more read whole entities (no $select) of 512 bytes or more",
        remedy="Ask only for the properties the application uses ($select, select= in azure-data-tables): the service "
        "sends less and the client parses less.",
        practice=True,
        fail_on=True,
    ),
    K.UNBATCHED_WRITES: Kind(
        severity=S.ADVICE,
        means="half of the single writes or more went from one client to one partition in a second that took 10 or "
        "more (one batch would carry them); closed loop only: in an open loop a user is a lane the schedule fills",
        remedy="Send writes to one partition together as an entity group transaction (up to 100 operations, 4 MiB, one "
        "PartitionKey): one request instead of many.",
        practice=True,
        fail_on=True,
    ),
    K.READ_BEFORE_WRITE: Kind(
        severity=S.ADVICE,
        means="10 % or more of inserts and unconditional updates wrote an entity the same client had just read",
        remedy="Write with an upsert (insert-or-merge, insert-or-replace) instead of reading first to decide between "
        "insert and update: one request instead of two.",
        practice=True,
        fail_on=True,
    ),
    K.APPEND_ONLY: Kind(
        severity=S.ADVICE,
        means="half or more of the writes that may create an entity used a PartitionKey after every key written more "
        "than 64 writes earlier",
        remedy="Avoid increasing keys (timestamps, counters): they always land on the last range partition. Prefix them "
        "with a hash, or put the seconds first (ssyyyyMMdd…).",
        practice=True,
        fail_on=True,
    ),
    K.PREPEND_ONLY: Kind(
        severity=S.ADVICE,
        means="half or more of the writes that may create an entity used a PartitionKey before every key written more "
        "than 64 writes earlier",
        remedy="Avoid decreasing keys (reverse timestamps): they always land on the first range partition. Prefix them "
        "with a hash, or put the seconds first.",
        practice=True,
        fail_on=True,
    ),
}
