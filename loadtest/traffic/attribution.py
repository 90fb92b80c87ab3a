"""What a logged request tells of its partition and its entities, from its operation and its URI (an entity's address,
a query's ``$filter``); what it cannot tell is counted as such: an insert's or a batch's partition as unattributed (the
keys are in the body, which no log keeps), a query's or a batch's entities as estimated from its sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from ..buckets import UNATTRIBUTED
from ..table_uri import ENTITY_OPERATIONS, entity_keys, filter_partition
from .records import LogRecord

__all__ = ["BATCH_PART_BYTES", "Attribution", "attribute"]

#: A batch's bytes per operation beside its entity (the multipart part's boundary, headers and request line): a batch's
#: operations are estimated from its request body as body / (entity + this).
BATCH_PART_BYTES = 300


@dataclass(frozen=True, slots=True)
class Attribution:
    """A logged request's op class, partition (``UNATTRIBUTED`` when its record names none) and entities: exact for an
    operation on one entity, ``estimated`` for a query (from its answer's size) or a batch (from its request's)."""

    op_class: str
    partition: str
    entities: int
    estimated: bool


def attribute(record: LogRecord, entity_bytes: int) -> Attribution | None:
    """The request's attribution, or None for an operation on tables or the service (not an entity's)."""
    op_class = ENTITY_OPERATIONS.get(record.operation)
    if op_class is None:
        return None
    path, _, query = record.uri.partition("?")
    keys = entity_keys(unquote(path))
    partition = keys[0] if keys else filter_partition(query) if record.operation == "QueryEntities" else None
    if partition is None and "PartitionKey" in record.object_key:
        keys = entity_keys(unquote(record.object_key))
        partition = keys[0] if keys else None
    if record.operation == "QueryEntities":
        answered = record.status is not None and record.status < 400
        return Attribution(
            op_class, partition or UNATTRIBUTED, round((record.response_body or 0) / entity_bytes) if answered else 0, True
        )
    if record.operation == "EntityGroupTransaction":
        operations = max(1, round((record.request_body or 0) / (entity_bytes + BATCH_PART_BYTES)))
        return Attribution(op_class, partition or UNATTRIBUTED, operations, True)
    return Attribution(op_class, partition or UNATTRIBUTED, 1, False)
