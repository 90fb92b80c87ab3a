"""Logged requests as columns: the fields the tally reads (``COLUMNS``, ``LogRecord``'s), a block of records at a time.

Reading a record a line in Python costs about 20 µs, so ten million records would take minutes. The forms written in
bulk (the diagnostic archive's JSON lines and the classic form) are read a block at a time, by DuckDB's JSON parser
and Apache Arrow's CSV reader, into the same columns; a block that does not read cleanly (a malformed line, a version
2.0 record) is read again a line at a time by ``forms``, which counts each line it cannot read with its reason. Either
way the tally sees the same columns. Measured by ``bench/traffic_read.py``.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Iterable

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from ..service.log_forms import CLASSIC_FIELDS
from .classic import SIZES, HourSeen, duplicate
from .records import MOST, STATUS_MOST, LogRecord, Unreadable

__all__ = ["COLUMNS", "NOT_FAST", "classic_block", "diagnostic_block", "from_records"]

#: What the tally reads of a record, as columns.
COLUMNS = pa.schema(
    [
        ("time", pa.float64()),
        ("operation", pa.string()),
        ("status", pa.int64()),
        ("status_text", pa.string()),
        ("uri", pa.string()),
        ("object_key", pa.string()),
        ("duration_ms", pa.float64()),
        ("request_body", pa.int64()),
        ("response_body", pa.int64()),
        ("client_request_id", pa.string()),
        ("response_type", pa.string()),
    ]
)
NOT_FAST = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, duckdb.Error, ValueError, KeyError)


def from_records(records: Iterable[LogRecord]) -> pa.Table:
    """Records read a line at a time, as columns."""
    rows = list(records)
    return pa.table({field.name: [getattr(r, field.name) for r in rows] for field in COLUMNS}, schema=COLUMNS)


def _epoch(times: pa.ChunkedArray | pa.Array) -> pa.Array:
    """ISO 8601 times in UTC as epoch seconds (ArrowInvalid for any other form: that block is read a line at a time)."""
    stamps = pc.cast(times, pa.timestamp("ns", tz="UTC"))
    return pc.divide(pc.cast(pc.cast(stamps, pa.int64()), pa.float64(), safe=False), 1e9)


def _bounded(*checked: tuple[pa.ChunkedArray | pa.Array, int]) -> None:
    """ValueError (``NOT_FAST``) where a number is outside a record's bounds (``records.MOST``, an HTTP status's): the
    line reader then counts that line unreadable, as it would wherever the blocks were cut."""
    for column, most in checked:
        if column.null_count == len(column):
            continue
        if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
            raise ValueError("a number that is NaN")
        low, high = (value.as_py() for value in pc.min_max(column).values())
        if low < 0 or high > most:
            raise ValueError(f"a number outside 0 to {most}")


def _given(first: pa.ChunkedArray, second: pa.ChunkedArray) -> pa.ChunkedArray:
    """The first where it says something, else the second (``properties`` before ``identity``), else ""."""
    first, second = pc.fill_null(first, ""), pc.fill_null(second, "")
    return pc.if_else(pc.equal(first, ""), second, first)


#: The diagnostic record's fields read, as DuckDB's ``from_json`` takes a structure; the rest of a record is not read.
_DIAGNOSTIC = json.dumps(
    {
        "time": "VARCHAR",
        "operationName": "VARCHAR",
        "statusCode": "BIGINT",
        "statusText": "VARCHAR",
        "uri": "VARCHAR",
        "durationMs": "DOUBLE",
        "properties": {
            "objectKey": "VARCHAR",
            "clientRequestId": "VARCHAR",
            "metricResponseType": "VARCHAR",
            "requestBodySize": "BIGINT",
            "responseBodySize": "BIGINT",
        },
        "identity": {"objectKey": "VARCHAR", "metricResponseType": "VARCHAR"},
    }
)
_BLANK_AT_MOST = 8  # bytes: a line this short may hold only white space


@functools.cache
def _duckdb() -> duckdb.DuckDBPyConnection:
    """One connection, called by the reader's parsing thread a block at a time (two threads of its own: a core the
    attributing and counting threads leave idle is used)."""
    connection = duckdb.connect()
    connection.execute("SET threads = 2")
    connection.execute("SET memory_limit = '512MB'")  # a block's lines: some tens of megabytes
    return connection


def _lines(block: bytes | memoryview) -> pa.Table:
    """A block's lines as a column, cut at its newlines without a copy; white-space lines left out."""
    data = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(data == ord("\n")) + 1
    if not len(ends) or ends[-1] != len(data):
        ends = np.append(ends, len(data))
    offsets = np.concatenate([[0], ends]).astype(np.int32)
    lines = pa.Array.from_buffers(pa.string(), len(ends), [None, pa.py_buffer(offsets), pa.py_buffer(block)])
    short = np.flatnonzero(np.diff(offsets) <= _BLANK_AT_MOST)
    blank = [int(i) for i in short if not bytes(block[offsets[i] : offsets[i + 1]]).strip()]
    if blank:
        keep = np.ones(len(lines), dtype=bool)
        keep[blank] = False
        lines = lines.filter(pa.array(keep))
    return pa.table({"line": lines})


def diagnostic_block(block: bytes | memoryview) -> pa.Table:
    """Whole lines of the diagnostic archive's JSON as columns; ``NOT_FAST`` when any line is not a JSON record or
    has no time or operation (the line reader then says which). DuckDB parses them (``from_json``): a third of the
    CPU Arrow's JSON reader took (bench/traffic_read.py). A number logged as text reads as the line reader reads it
    (``"Unknown"`` and ``""`` as none, ``"200"`` as 200); text that is no number at all, or one past int64, reads as
    none here, where the line reader would count its line unreadable. A number outside a record's bounds
    (``records.MOST``, NaN, an HTTP status past 999) is ``NOT_FAST``: its line is counted unreadable."""
    connection = _duckdb()
    connection.register("block_lines", _lines(block))
    try:
        read = connection.sql(f"SELECT unnest(from_json(line, '{_DIAGNOSTIC}')) FROM block_lines").to_arrow_table()
    finally:
        connection.unregister("block_lines")
    if read["time"].null_count or read["operationName"].null_count:
        raise ValueError("a record without its time or operation")  # the line reader names which
    properties, identity = read["properties"], read["identity"]
    request_body, response_body = pc.struct_field(properties, "requestBodySize"), pc.struct_field(properties, "responseBodySize")
    _bounded((read["statusCode"], STATUS_MOST), (read["durationMs"], MOST), (request_body, MOST), (response_body, MOST))
    return pa.table(
        {
            "time": _epoch(read["time"]),
            "operation": read["operationName"],
            "status": read["statusCode"],
            "status_text": pc.fill_null(read["statusText"], ""),
            "uri": pc.fill_null(read["uri"], ""),
            "object_key": _given(pc.struct_field(properties, "objectKey"), pc.struct_field(identity, "objectKey")),
            "duration_ms": read["durationMs"],
            "request_body": request_body,
            "response_body": response_body,
            "client_request_id": pc.fill_null(pc.struct_field(properties, "clientRequestId"), ""),
            "response_type": _given(
                pc.struct_field(properties, "metricResponseType"), pc.struct_field(identity, "metricResponseType")
            ),
        },
        schema=COLUMNS,
    )


_CLASSIC_READ = pa_csv.ReadOptions(column_names=list(CLASSIC_FIELDS), block_size=1 << 22)
_CLASSIC_PARSE = pa_csv.ParseOptions(delimiter=";", quote_char='"')
_CLASSIC_WANTED = (
    "version", "request-start-time", "operation-type", "request-status", "http-status-code", "end-to-end-latency-in-ms",
    "request-url", "requested-object-key", "request-id-header", "operation-count", "response-header-size",
    "response-packet-size", "request-content-length", "client-request-id",
)  # fmt: skip
_CLASSIC_CONVERT = pa_csv.ConvertOptions(
    column_types={name: pa.string() for name in _CLASSIC_WANTED},
    include_columns=list(_CLASSIC_WANTED),
    strings_can_be_null=False,
    quoted_strings_can_be_null=False,
)


def _unescaped(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A classic field's values HTML-decoded (the few that hold an entity: ``&`` in them)."""
    if not pc.any(pc.match_substring(column, "&")).as_py():
        return column
    return pa.chunked_array([pa.array([html.unescape(v) if "&" in v else v for v in column.to_pylist()], pa.string())])


def _number(column: pa.ChunkedArray, kind: pa.DataType) -> pa.ChunkedArray:
    """A numeric field ('' is none); ArrowInvalid for anything else, read again a line at a time."""
    return pc.cast(pc.if_else(pc.equal(column, ""), None, column), kind)


def classic_block(block: bytes | memoryview, seen: HourSeen) -> tuple[pa.Table, list[Unreadable]]:
    """Whole lines of the classic form (version 1.0) as columns, and the records repeated within their hour, as
    ``Unreadable`` of reason ``DUPLICATE``; ``NOT_FAST`` when any line is not a 1.0 record of its fields."""
    read = pa_csv.read_csv(
        pa.BufferReader(pa.py_buffer(block)),
        read_options=_CLASSIC_READ,
        parse_options=_CLASSIC_PARSE,
        convert_options=_CLASSIC_CONVERT,
    )
    if not pc.all(pc.equal(read["version"], "1.0")).as_py():
        raise ValueError("not all version 1.0 records")
    started = _unescaped(read["request-start-time"])
    status = read["http-status-code"]
    code = pc.cast(pc.if_else(pc.ascii_is_decimal(status), status, None), pa.int64())
    duration = _number(read["end-to-end-latency-in-ms"], pa.float64())
    sizes = {name: pc.fill_null(_number(read[name], pa.int64()), 0) for name in SIZES}
    logged = read["operation-count"]
    counts = pc.cast(pc.if_else(pc.equal(logged, ""), "0", logged), pa.int64())
    _bounded((code, STATUS_MOST), (duration, MOST), (counts, MOST), *((size, MOST) for size in sizes.values()))
    table = pa.table(
        {
            "time": _epoch(started),
            "operation": read["operation-type"],
            "status": code,
            "status_text": read["request-status"],
            "uri": _unescaped(read["request-url"]),
            "object_key": _unescaped(read["requested-object-key"]),
            "duration_ms": duration,
            "request_body": sizes["request-content-length"],
            "response_body": pc.subtract(sizes["response-packet-size"], sizes["response-header-size"]),
            "client_request_id": _unescaped(read["client-request-id"]),
            "response_type": pa.nulls(read.num_rows, pa.string()).fill_null(""),
        },
        schema=COLUMNS,
    )
    hours = np.floor_divide(table["time"].to_numpy(), 3600).astype(np.int64)  # classic.hour_of, a block at a time
    ids = read["request-id-header"].to_pylist()
    repeated = seen.repeated(hours, ids, counts.to_numpy(zero_copy_only=False))
    if not repeated:
        return table, []
    dropped = [duplicate(ids[i], logged[i].as_py()) for i in repeated]
    keep = pc.invert(pc.is_in(pa.array(range(read.num_rows)), value_set=pa.array(repeated)))
    return table.filter(keep), dropped
