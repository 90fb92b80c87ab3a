"""What logged requests tell of their partition and their entities, from their operation and their URI (an entity's
address, a query's ``$filter``); what they cannot tell is counted as such: an insert's or a batch's partition as
unattributed (the keys are in the body, which no log keeps), a query's or a batch's entities as estimated from its sizes.

A block of records at a time (columns, not objects): a plainly written address's PartitionKey is cut from the block's
URI bytes by array arithmetic (``addressed``); only the rest (a key with a quote or percent-encoded, a query's
``$filter``, an object key) goes through ``partition_of`` one record at a time. What a read reached (a point, a range
in a partition, partitions, the table: ``query_reach.REACHES``) comes with it, for the checklist.
"""

from __future__ import annotations

from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..counting.buckets import UNATTRIBUTED
from ..workload.table_uri import ENTITY_OPERATIONS, entity_keys, filter_reach

__all__ = [
    "BATCH",
    "QuerySizes",
    "BATCH_PART_BYTES",
    "QUERY",
    "addressed",
    "attribute",
    "codes_of",
    "partition_of",
    "query_entity_bytes",
]

#: A batch's bytes per operation beside its entity (the multipart part's boundary, headers and request line): a batch's
#: operations are estimated from its request body as body / (entity + this).
BATCH_PART_BYTES = 300
QUERY = "QueryEntities"  # entities estimated from the answer's size; the partition from the $filter
BATCH = "EntityGroupTransaction"  # operations estimated from the request's size; the partition not logged
_SELECT = r"(\$|%24)select="  # a query string that names the properties to return


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


_OPEN, _ROW, _CLOSE = b"(PartitionKey='", b"',RowKey='", b"')"


def _next(found: np.ndarray, after: np.ndarray, size: int) -> np.ndarray:
    """The first of ``found`` (sorted byte positions) at or after each of ``after``; ``size`` where none is."""
    return np.append(found, size)[np.searchsorted(found, after)]


def _reads(data: np.ndarray, at: np.ndarray, expected: bytes) -> np.ndarray:
    """Whether the bytes at each of ``at`` read ``expected`` (the caller keeps them within their row)."""
    said = np.ones(len(at), dtype=bool)
    for i, byte in enumerate(expected):
        said &= data.take(at + i, mode="clip") == byte
    return said


def addressed(uri: pa.Array) -> pa.Array:
    """Each URI's PartitionKey where it names an entity plainly — ``(PartitionKey='k',RowKey='r')``, no quote in either
    key and no ``%`` in the PartitionKey — else null (``partition_of`` reads the rest, one at a time). Cut from the
    URIs' own bytes by array arithmetic: RE2 reading ``table_uri.POINT_PATTERN`` took 1.5 s of a million records'
    URIs, a block at a time, and this 0.45 s."""
    uri = pc.fill_null(uri, "") if uri.null_count else uri
    if not len(uri) or not uri.buffers()[2] or not uri.buffers()[2].size:  # no URI has a byte
        return pa.nulls(len(uri), pa.string())
    offsets = np.frombuffer(uri.buffers()[1], dtype=np.int32, count=len(uri) + 1, offset=uri.offset * 4).astype(np.int64)
    data = np.frombuffer(uri.buffers()[2], dtype=np.uint8)
    ends, size = offsets[1:], len(data)
    at = pc.find_substring(uri, _OPEN.decode()).to_numpy(zero_copy_only=False)
    begin = np.where(at >= 0, offsets[:-1] + at + len(_OPEN), ends)
    quotes = np.flatnonzero(data == ord("'"))
    end = _next(quotes, begin, size)  # the PartitionKey's closing quote: a doubled one is not followed by _ROW
    row_end = _next(quotes, end + len(_ROW), size)  # the RowKey's
    plain = (at >= 0) & (row_end + len(_CLOSE) <= ends) & _reads(data, end, _ROW) & _reads(data, row_end, _CLOSE)
    percents = np.flatnonzero(data == ord("%"))
    plain &= np.searchsorted(percents, begin) == np.searchsorted(percents, end)
    lengths = np.where(plain, end - begin, 0)
    cut = np.zeros(len(uri) + 1, dtype=np.int64)
    np.cumsum(lengths, out=cut[1:])
    keys = data[np.repeat(begin - cut[:-1], lengths) + np.arange(cut[-1])]
    valid = pa.array(plain).buffers()[1]
    return pa.Array.from_buffers(pa.string(), len(uri), [valid, pa.py_buffer(cut.astype(np.int32)), pa.py_buffer(keys)])


def codes_of(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """A string column as (per-row index, distinct values): what is decided per value is decided once."""
    encoded = pc.dictionary_encode(pc.fill_null(column, "")).combine_chunks()
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()


def _projected(uri: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Whether each URI's query string names the properties to return (a URI without a query string, as most point
    operations' are, is not read by the regular expression)."""
    asked = pc.fill_null(pc.greater_equal(pc.find_substring(uri, "?"), 0), False).to_numpy(zero_copy_only=False)
    said = np.zeros(len(asked), dtype=bool)
    if asked.any():
        named = pc.match_substring_regex(uri.filter(pa.array(asked)), _SELECT, ignore_case=True)
        said[asked] = pc.fill_null(named, False).to_numpy(zero_copy_only=False)
    return said


#: What a point read's answer holds beside its entity, and a query's answer holds once for all its entities: the
#: metadata member naming the entity's table, ``"odata.metadata":"<the table's address>/$metadata#<table>/@Element",``
#: (the address before the key's parenthesis, plus these characters) and the braces.
_METADATA_CHARS = len('{"odata.metadata":"",}') + len("$metadata#") + len("/@Element")


def query_entity_bytes(records: pa.Table, addressed_to: pa.Array | pa.ChunkedArray | None = None) -> tuple[int, int]:
    """The bytes an entity takes in a query's answer, as the point reads among ``records`` carried it: each successful
    point read's answer less its metadata member (a query's answer names the table once, not for each entity), summed;
    and how many point reads that is. A run's own request log: 648 bytes an entity in its scans' answers, 764 in its
    point reads' (the metadata), 1,024 the default guess. ``addressed_to``: which records address one entity, where
    the caller parsed their URIs already (``attribute``)."""
    uri = records["uri"].combine_chunks() if isinstance(records["uri"], pa.ChunkedArray) else records["uri"]
    addressed_to = addressed(uri).is_valid() if addressed_to is None else addressed_to
    point = pc.and_(pc.equal(records["operation"], "QueryEntity"), addressed_to)
    status = pc.fill_null(records["status"], -1)
    point = pc.fill_null(pc.and_(point, pc.and_(pc.greater_equal(status, 200), pc.less(status, 300))), False)
    if not pc.any(point).as_py():
        return 0, 0
    answer = pc.fill_null(records["response_body"].filter(point), 0).to_numpy(zero_copy_only=False)
    address = pc.find_substring(uri.filter(point), "(").to_numpy(zero_copy_only=False)
    sizes = answer - address - _METADATA_CHARS
    sizes = sizes[(address > 0) & (sizes > 0)]
    return int(sizes.sum()), len(sizes)


class QuerySizes:
    """An entity's size in a query's answer as the point reads read so far carried it (``query_entity_bytes``): what a
    block without a point read of its own is attributed at."""

    def __init__(self) -> None:
        self.measured = self.reads = 0

    def add(self, records: pa.Table, said: pa.Table) -> None:
        """A block's point reads (``said``: ``attribute``'s reading of ``records``)."""
        measured, reads = query_entity_bytes(records, pc.equal(said["reach"], "point"))
        self.measured, self.reads = self.measured + measured, self.reads + reads

    def mean(self) -> int | None:
        """The mean so far; None before any point read."""
        return round(self.measured / self.reads) if self.reads else None


def attribute(records: pa.Table, entity_bytes: int, query_bytes: int | None = None) -> pa.Table:
    """Per record: ``op_class`` (null for an operation on tables or the service, not an entity's), ``partition``
    (``UNATTRIBUTED`` when its record names none), ``reach`` (``partition_of``'s), ``entities`` (exact for an operation
    on one entity; a query's from its answer's size, a batch's from its request's) and whether they were
    ``estimated``, and whether its URI names the properties to return (``projected``: ``$select``). A query's entities
    are its answer over an entity's size in a query's answer as the block's own point reads carry it
    (``query_entity_bytes``), else ``query_bytes`` (what the reader measured before), else ``entity_bytes``."""
    codes, operations = codes_of(records["operation"])
    op_class = pa.array([ENTITY_OPERATIONS.get(name) for name in operations], pa.string()).take(codes)
    query = np.array([name == QUERY for name in operations] + [False])[codes]
    batch = np.array([name == BATCH for name in operations] + [False])[codes]
    entity = op_class.is_valid().to_numpy(zero_copy_only=False)
    # an address lies before any query string, whose $filter never reads "(PartitionKey='"
    partition = addressed(records["uri"].combine_chunks() if isinstance(records["uri"], pa.ChunkedArray) else records["uri"])
    matched = partition.is_valid().to_numpy(zero_copy_only=False)
    reach = pa.array(np.where(matched, "point", ""), pa.string())
    rest = np.flatnonzero(entity & ~matched)
    if len(rest):  # the few the block's bytes do not give plainly, one at a time (and every query)
        uris, keys = records["uri"].take(rest).to_pylist(), records["object_key"].take(rest).to_pylist()
        names = [operations[c] for c in codes[rest]]
        given = zip(names, (u or "" for u in uris), (k or "" for k in keys), strict=True)
        partitions, reaches = zip(*(partition_of(*one) for one in given), strict=True)
        mask = np.zeros(len(codes), dtype=bool)
        mask[rest] = True
        partition = pc.replace_with_mask(partition, pa.array(mask), pa.array(partitions, pa.string()))
        reach = pc.replace_with_mask(reach, pa.array(mask), pa.array(reaches, pa.string()))
    partition = pc.if_else(pa.array(entity & ~partition.is_valid().to_numpy(zero_copy_only=False)), UNATTRIBUTED, partition)
    status = pc.fill_null(records["status"], -1).to_numpy(zero_copy_only=False)
    answered = (status >= 0) & (status < 400)
    response = pc.fill_null(records["response_body"], 0).to_numpy(zero_copy_only=False)
    request = pc.fill_null(records["request_body"], 0).to_numpy(zero_copy_only=False)
    measured, reads = query_entity_bytes(records, pc.equal(reach, "point")) if query.any() else (0, 0)
    per_entity = measured / reads if reads else (query_bytes or entity_bytes)
    entities = np.where(
        query,
        np.where(answered, np.round(response / per_entity), 0),
        np.where(batch, np.maximum(1, np.round(request / (entity_bytes + BATCH_PART_BYTES))), 1),
    ).astype(np.int64)
    return pa.table(
        {
            "op_class": op_class,
            "partition": partition,
            "reach": reach,
            "entities": entities,
            "estimated": query | batch,
            "projected": _projected(records["uri"]),
        }
    )
