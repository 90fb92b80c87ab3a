"""The log forms ``loadtest traffic`` reads, each a stream of ``LogRecord`` (or ``Unreadable``) from a stream of lines:

- ``diagnostic``: Azure Monitor's resource logs as a diagnostic setting archives them to a storage account
  (``insights-logs-storageread`` …, ``PT1H.json``): one JSON record a line, ``properties`` and ``identity`` nested.
- ``analytics-csv`` and ``analytics-json``: the ``StorageTableLogs`` table exported from Log Analytics (the portal's
  CSV, or JSON: an array or a record a line; ``az monitor log-analytics query``'s JSON), its columns as the table
  names them, in any order, any that are not read left out. The portal's export names a time column with its zone
  (``TimeGenerated [UTC]``) and writes its times as the portal shows them (``11/23/2026, 7:59:59.875 PM``).
- ``classic``: Storage Analytics logging (``$logs/table/…/NNNNNN.log``), ``classic.classic_records``.

Built from the documented fields; no public sample of the Table service's logs exists to check them against (the
docs page on this command says so). Records are read one at a time (the bulk forms a block at a time, ``columns``,
this reader taking any block Arrow's cannot): memory does not grow with the logs' size.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..exit_codes import UsageError
from ..service.log_forms import FORMS, parse_time
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
    zones: dict[str, float] = {}  # the time columns' zones: a CSV's from its header, a JSON record's from its keys
    if form == "analytics-csv":
        return _analytics(_csv_rows(lines, zones), "a CSV row", zones)
    if form == "analytics-json":
        return _analytics(_named(_json_objects(lines), zones), "a JSON record", zones)
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


def _analytics(rows: Iterable[Any], what: str, zones: dict[str, float] | None = None) -> Iterator[LogRecord | Unreadable]:
    """Records of rows named by the table's columns; ``zones``: each time column's offset east of UTC in seconds,
    as its header named it (the portal's ``TimeGenerated [UTC]``)."""
    for row in rows:
        if isinstance(row, Unreadable):
            yield row
            continue
        try:
            values = {field: row[ANALYTICS_COLUMNS[field]] for field in _REQUIRED}
            values |= {field: _null(row.get(column)) for field, column in ANALYTICS_COLUMNS.items() if field not in _REQUIRED}
            read = {field: _READ.get(field, _text)(value) for field, value in values.items()}
            if zones and (east := zones.get(ANALYTICS_COLUMNS["time"])):
                read["time"] -= east
            yield LogRecord(**read)
        except NOT_A_RECORD as err:
            yield Unreadable(_why(err, what), _shown(row))


_COLUMN_NAMES = frozenset(ANALYTICS_COLUMNS.values())
#: A column as the portal's export names it: the table's name, then the zone its times are shown in.
_ZONED = re.compile(r"\s*(?P<name>[^\[\]]*?)\s*\[(?P<zone>[^\[\]]*)\]\s*")
_UTC = re.compile(r"(?i)(?:UTC|GMT)(?:\s*(?P<sign>[+-])(?P<hours>[0-9]{1,2})(?::?(?P<minutes>[0-9]{2}))?)?")


def column_zone(header: str) -> tuple[str, float | None]:
    """A column's name and the offset east of UTC its times are in, in seconds (None: the header names no zone):
    ``TimeGenerated [UTC]`` is ``("TimeGenerated", 0)``, ``TimeGenerated [UTC+01:00]`` 3,600 s. A zone given by
    no offset (``[Local Time]``) is a ``UsageError``: its times cannot be read as UTC."""
    found = _ZONED.fullmatch(header)
    if found is None or found["name"] not in _COLUMN_NAMES:
        return header.strip(), None  # a column the tool does not read, as it is
    name, zone = found["name"], found["zone"].strip()
    if name != ANALYTICS_COLUMNS["time"]:
        return name, None  # the one time column read is TimeGenerated
    utc = _UTC.fullmatch(zone)
    if utc is None or (utc["hours"] and int(utc["hours"]) > 14):
        raise UsageError(
            f"the column {header[:80]!r} shows its times in {zone[:40]!r}, not as an offset from UTC: export it again "
            "with the portal's display time zone set to UTC (the results' time zone setting), or as JSON"
        )
    east = int(utc["hours"] or 0) * 3600 + int(utc["minutes"] or 0) * 60
    return name, float(-east if utc["sign"] == "-" else east)


def _named(objects: Iterable[Any], zones: dict[str, float]) -> Iterator[Any]:
    """JSON records with their keys as the table names its columns: a key the portal gave its zone (``TimeGenerated
    [UTC]``) by its name, the zone's offset into ``zones`` as each record is given (``_analytics`` reads it then)."""
    for found in objects:
        zones.clear()
        if not isinstance(found, dict) or not any("[" in key for key in found):
            yield found
            continue
        named = {key: column_zone(key) for key in found}
        zones.update({name: east for name, east in named.values() if east})
        yield {name: found[key] for key, (name, _) in named.items()}


#: A null as ``az monitor log-analytics query`` writes it: its output transform passes every value through ``str()``
#: (azure-cli's ``transform_log_analytics_query_output``), so a null number is the text ``None``.
AZ_CLI_NULL = "None"


def _null(value: Any) -> Any:
    """A column's value, the az CLI's null read as none (no column the tool reads holds the text ``None`` itself)."""
    return None if value == AZ_CLI_NULL else value


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _shown(row: Any) -> str:
    """A row that is no record, as its example (JSON nested too deep to write again is said so)."""
    try:
        return json.dumps(row)[:300] if isinstance(row, dict) else str(row)[:300]
    except (ValueError, RecursionError):
        return "(nested too deep to show)"


def _csv_rows(lines: Iterable[str], zones: dict[str, float]) -> Iterator[dict[str, str] | Unreadable]:
    """The rows of a CSV export by its header's names (as ``csv.DictReader`` gives them; a name the portal gave its
    zone by its name, the zone's offset into ``zones``), a row the reader cannot take (a field over
    ``csv.field_size_limit()``) as ``Unreadable``, the rows after it read on."""
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
            named = [column_zone(name.lstrip("\ufeff")) for name in row]
            header = [name for name, _ in named]
            zones.update({name: east for name, east in named if east})
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
