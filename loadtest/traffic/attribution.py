"""What logged requests tell of their partition and their entities, from their operation and their URI (an entity's
address, a query's ``$filter``); what they cannot tell is counted as such: an insert's or a batch's partition as
unattributed (the keys are in the body, which no log keeps), a query's or a batch's entities as estimated from its sizes.

A block of records at a time (columns, not objects): an entity's address is read by one regular expression over the
block (RE2, the pattern ``table_uri`` declares); only what it cannot read (a percent-encoded address, a query's
``$filter``, an object key) goes through ``partition_of`` one record at a time. What a read reached (a point, a range
in a partition, partitions, the table: ``query_reach.REACHES``) comes with it, for the checklist.
"""

from __future__ import annotations

from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..buckets import UNATTRIBUTED
from ..table_uri import ENTITY_OPERATIONS, POINT_PATTERN, entity_keys, filter_reach

__all__ = ["BATCH", "BATCH_PART_BYTES", "QUERY", "attribute", "codes_of", "partition_of"]

#: A batch's bytes per operation beside its entity (the multipart part's boundary, headers and request line): a batch's
#: operations are estimated from its request body as body / (entity + this).
BATCH_PART_BYTES = 300
QUERY = "QueryEntities"  # entities estimated from the answer's size; the partition from the $filter
BATCH = "EntityGroupTransaction"  # operations estimated from the request's size; the partition not logged


def partition_of(operation: str, uri: str, object_key: str) -> tuple[str | None, str]:
    """The partition one record names — its address's PartitionKey (percent-decoded), a query's ``$filter``, or its
    object key's; None when it names none — and the reach of what it addressed ("" where the record does not tell)."""
    path, _, query = uri.partition("?")
    keys = entity_keys(unquote(path))
    if keys is None and operation == QUERY:
        reach = filter_reach(query)
        return (reach.partition, reach.kind) if reach is not None else (None, "")
    if keys is None and "PartitionKey" in object_key:
        keys = entity_keys(unquote(object_key))
    return (keys[0], "point") if keys else (None, "")


def codes_of(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """A string column as (per-row index, distinct values): what is decided per value is decided once."""
    encoded = pc.dictionary_encode(pc.fill_null(column, "")).combine_chunks()
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()


def attribute(records: pa.Table, entity_bytes: int) -> pa.Table:
    """Per record: ``op_class`` (null for an operation on tables or the service, not an entity's), ``partition``
    (``UNATTRIBUTED`` when its record names none), ``reach`` (``partition_of``'s), ``entities`` (exact for an operation
    on one entity; a query's from its answer's size, a batch's from its request's) and whether they were
    ``estimated``."""
    codes, operations = codes_of(records["operation"])
    op_class = np.array([ENTITY_OPERATIONS.get(name) for name in operations] + [None], dtype=object)[codes]
    query = np.array([name == QUERY for name in operations] + [False])[codes]
    batch = np.array([name == BATCH for name in operations] + [False])[codes]
    entity = op_class != None  # noqa: E711 -- numpy's element-wise comparison
    # an address lies before any query string, whose $filter never reads "(PartitionKey='"; a key percent-encoded
    # (or an address whose quotes are) is decoded one record at a time
    found = pc.struct_field(pc.extract_regex(records["uri"], POINT_PATTERN), "pk")  # null where no address matched
    decoded = pc.replace_substring(found, "''", "'")
    matched = pc.fill_null(pc.invert(pc.match_substring(found, "%")), False).to_numpy(zero_copy_only=False)
    partition = np.array(decoded.to_pylist(), dtype=object) if matched.any() else np.full(len(codes), None, object)
    reach = np.where(matched, "point", "").astype(object)
    rest = np.flatnonzero(entity & ~matched)
    if len(rest):  # the few a block's regular expression cannot read, one at a time (and every query)
        uris, keys = records["uri"].take(rest).to_pylist(), records["object_key"].take(rest).to_pylist()
        names = [operations[c] for c in codes[rest]]
        given = zip(names, (u or "" for u in uris), (k or "" for k in keys), strict=True)
        partition[rest], reach[rest] = zip(*(partition_of(*one) for one in given), strict=True)
    partition[entity & (partition == None)] = UNATTRIBUTED  # noqa: E711
    status = pc.fill_null(records["status"], -1).to_numpy(zero_copy_only=False)
    answered = (status >= 0) & (status < 400)
    response = pc.fill_null(records["response_body"], 0).to_numpy(zero_copy_only=False)
    request = pc.fill_null(records["request_body"], 0).to_numpy(zero_copy_only=False)
    entities = np.where(
        query,
        np.where(answered, np.round(response / entity_bytes), 0),
        np.where(batch, np.maximum(1, np.round(request / (entity_bytes + BATCH_PART_BYTES))), 1),
    ).astype(np.int64)
    return pa.table(
        {
            "op_class": pa.array(op_class, pa.string()),
            "partition": pa.array(partition, pa.string()),
            "reach": pa.array(reach, pa.string()),
            "entities": entities,
            "estimated": query | batch,
        }
    )
