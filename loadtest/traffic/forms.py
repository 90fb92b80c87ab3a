"""The log forms ``loadtest traffic`` reads, each a stream of ``LogRecord`` (or ``Unreadable``) from a stream of lines:

- ``diagnostic``: Azure Monitor's resource logs as a diagnostic setting archives them to a storage account
  (``insights-logs-storageread`` …, ``PT1H.json``): one JSON record a line, ``properties`` and ``identity`` nested.
- ``analytics-csv`` and ``analytics-json``: the ``StorageTableLogs`` table exported from Log Analytics (the portal's
  CSV, or JSON: an array or a record a line), its columns as the table names them.
- ``classic``: Storage Analytics logging (``$logs/table/…/NNNNNN.log``), ``classic.records``.

Built from the documented fields; no public sample of the Table service's logs exists to check them against (the
docs page on this command says so). Records are read one at a time (the bulk forms a block at a time, ``columns``,
this reader taking any block Arrow's cannot): memory does not grow with the logs' size.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..log_forms import FORMS, parse_time
from .classic import HourSeen, classic_records
from .records import LogRecord, Unreadable, logged_number, logged_status

__all__ = ["ANALYTICS_COLUMNS", "FORMS", "detect", "records"]


def detect(first: str) -> str | None:
    """The form of a source from its first non-blank line, or None."""
    line = first.lstrip("\ufeff").strip()
    if line[:4] in ("1.0;", "2.0;"):
        return "classic"
    if line.startswith("["):
        return "analytics-json"
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # a record over several lines, one cut short, one nested too deep
            record = {key: None for key in ("operationName", "properties") if f'"{key}"' in line}
        return "diagnostic" if "operationName" in record or "properties" in record else "analytics-json"
    if "TimeGenerated" in line and "OperationName" in line:
        return "analytics-csv"
    return None


def records(form: str, lines: Iterable[str], seen: HourSeen | None = None) -> Iterator[LogRecord | Unreadable]:
    """The records of ``lines`` in ``form`` (``FORMS``), each line that is not one as ``Unreadable`` (``seen``: the
    classic records read so far, across a reader's blocks)."""
    if form == "classic":
        return classic_records(lines, seen)
    if form == "analytics-csv":
        return _analytics(_csv_rows(lines), "a CSV row")
    if form == "analytics-json":
        return _analytics(_json_objects(lines), "a JSON record")
    return _diagnostic(lines)


#: What a line that is not a record raises as it is read: a value of a wrong type or none, one that does not parse or
#: is outside a record's bounds (``records.MOST``), JSON nested deeper than Python reads.
NOT_A_RECORD = (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError)


def _number(value: Any) -> float | None:
    """A number as logged, within a record's bounds: a number, a numeric string, or none (``Unknown``, ``""``)."""
    if value in (None, "", "Unknown"):
        return None
    return logged_number(float(value))


def _status(value: Any) -> int | None:
    """A status code as logged: a number, a numeric string, or ``Unknown``."""
    if value in (None, "", "Unknown"):
        return None
    return logged_status(float(value))


def _diagnostic(lines: Iterable[str]) -> Iterator[LogRecord | Unreadable]:
    for line in lines:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            properties, identity = row.get("properties") or {}, row.get("identity") or {}
            yield LogRecord(
                time=parse_time(row["time"]),
                operation=_operation(row["operationName"]),
                status=_status(row.get("statusCode")),
                status_text=str(row.get("statusText") or ""),
                uri=str(row.get("uri") or ""),
                object_key=str(properties.get("objectKey") or identity.get("objectKey") or ""),
                duration_ms=_number(row.get("durationMs")),
                server_latency_ms=_number(properties.get("serverLatencyMs")),
                request_body=_int(properties.get("requestBodySize")),
                response_body=_int(properties.get("responseBodySize")),
                client_request_id=str(properties.get("clientRequestId") or ""),
                request_id=str(row.get("correlationId") or ""),
                operation_count=_int(properties.get("operationCount")) or 0,
                response_type=str(properties.get("metricResponseType") or identity.get("metricResponseType") or ""),
            )
        except NOT_A_RECORD as err:
            yield Unreadable(_why(err, "a diagnostic log record"), line)


def _operation(value: Any) -> str:
    """An operation's name as logged, as the block reader takes it: text, a number as its digits; none is no record."""
    if value is None:
        raise KeyError("operationName")
    return value if isinstance(value, str) else json.dumps(value)


def _int(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


#: ``LogRecord``'s fields as the ``StorageTableLogs`` table names its columns: what an export holds (``--kql``).
ANALYTICS_COLUMNS = {
    "time": "TimeGenerated",
    "operation": "OperationName",
    "status": "StatusCode",
    "status_text": "StatusText",
    "uri": "Uri",
    "object_key": "ObjectKey",
    "duration_ms": "DurationMs",
    "server_latency_ms": "ServerLatencyMs",
    "request_body": "RequestBodySize",
    "response_body": "ResponseBodySize",
    "operation_count": "OperationCount",
    "client_request_id": "ClientRequestId",
    "request_id": "CorrelationId",
    "response_type": "MetricResponseType",
}
_REQUIRED = ("time", "operation")
_READ = {"time": parse_time, "status": _status, "duration_ms": _number, "server_latency_ms": _number}
_READ |= {name: _int for name in ("request_body", "response_body")}
_READ["operation_count"] = lambda value: _int(value) or 0


def _analytics(rows: Iterable[Any], what: str) -> Iterator[LogRecord | Unreadable]:
    for row in rows:
        if isinstance(row, Unreadable):
            yield row
            continue
        try:
            values = {field: row[ANALYTICS_COLUMNS[field]] for field in _REQUIRED}
            values |= {field: row.get(column) for field, column in ANALYTICS_COLUMNS.items() if field not in _REQUIRED}
            yield LogRecord(**{field: _READ.get(field, _text)(value) for field, value in values.items()})
        except NOT_A_RECORD as err:
            yield Unreadable(_why(err, what), _shown(row))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _shown(row: Any) -> str:
    """A row that is no record, as its example (JSON nested too deep to write again is said so)."""
    try:
        return json.dumps(row)[:300] if isinstance(row, dict) else str(row)[:300]
    except (ValueError, RecursionError):
        return "(nested too deep to show)"


def _csv_rows(lines: Iterable[str]) -> Iterator[dict[str, str] | Unreadable]:
    """The rows of a CSV export by its header's names (as ``csv.DictReader`` gives them), a row the reader cannot
    take (a field over ``csv.field_size_limit()``) as ``Unreadable``, the rows after it read on."""
    rows, header = csv.reader(lines), None
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as err:
            limit = csv.field_size_limit()
            long = "larger than field limit" in str(err)
            yield Unreadable(f"a CSV row with a field over {limit:,} characters" if long else "not a CSV row", str(err))
            if header is None:
                return  # no header: no row after it has names
            continue
        if not row:
            continue
        if header is None:
            header = row
            continue
        yield dict(zip(header, row, strict=False))


def _json_objects(lines: Iterable[str]) -> Iterator[Any]:
    """The objects of a JSON array or of JSON lines, read a piece at a time (a whole export never in memory)."""
    decoder, buffer = json.JSONDecoder(), ""
    for line in lines:
        buffer += line
        position = 0
        while True:
            while position < len(buffer) and buffer[position] in " \t\r\n,[]\ufeff":
                position += 1
            if position >= len(buffer):
                break
            try:
                found, position = decoder.raw_decode(buffer, position)
            except RecursionError:  # nested deeper than Python reads: what is held of it is let go
                yield Unreadable("a JSON record nested too deep to read", buffer[position : position + 200])
                position = len(buffer)
                break
            except ValueError:
                if len(buffer) - position > 1 << 20:  # a megabyte without a whole object: not one
                    yield Unreadable("not JSON", buffer[position : position + 200])
                    position = len(buffer)
                break
            yield found if isinstance(found, dict) else Unreadable("not a JSON record", json.dumps(found)[:200])
        buffer = buffer[position:]
    if buffer.strip(" \t\r\n,[]"):
        yield Unreadable("not JSON", buffer[:200])


def _why(err: Exception, what: str) -> str:
    """The reason a record is counted as unreadable: a missing field by name, else a value that does not parse."""
    if isinstance(err, KeyError):
        return f"{what} without {err.args[0]}"
    return f"{what} with a value that does not parse"
