"""Storage Analytics logging, the classic form (``$logs/table/YYYY/MM/DD/hh00/NNNNNN.log``): a record a line, fields
separated by ``;``; a field that may hold ``;``, quotes or newlines is quoted and HTML-encoded. Version 1.0's fields in
their documented order (2.0 appends identity fields after them). The service may write a record twice within an hour, in
any of that hour's files: the second of a request id and operation count is skipped, and counted as a duplicate.
"""

from __future__ import annotations

import csv
import html
from collections.abc import Hashable, Iterable, Iterator, Sequence

import numpy as np

from ..service.log_forms import CLASSIC_FIELDS, parse_time
from .records import LogRecord, Unreadable, logged_number, logged_status

__all__ = ["DUPLICATE", "SIZES", "HourSeen", "classic_records", "duplicate", "hour_of"]

_AT = {name: i for i, name in enumerate(CLASSIC_FIELDS)}
DUPLICATE = "a duplicate record (the same request id and operation count)"
#: The sizes a record is read for, in bytes: its request's body, its response's packet and headers.
SIZES = ("request-content-length", "response-packet-size", "response-header-size")
_SPREAD = 1_000_003  # a request id's hash times this, plus its operation count (wrapping at 64 bits)


def _field(row: list[str], name: str) -> str:
    value = row[_AT[name]]
    return html.unescape(value) if "&" in value else value


def _number(text: str) -> float | None:
    return logged_number(float(text)) if text else None


def _whole(text: str) -> int:
    """A size or count as logged (none is 0), within a record's bounds: a 20-digit count is no record's."""
    return int(logged_number(int(text))) if text else 0


class HourSeen:
    """The records of the hours being read, by request id and operation count: the service may write one twice within
    its hour, in the same file or in another of that hour's (a busy hour is several ``NNNNNN.log``), and a request
    that began in one hour may be logged in the next hour's folder. One per command, across its sources and their
    blocks: the ``HOURS`` hours read most recently are held, so an hour's files are matched whatever order they come
    in while their hour is among them (``reader.paths`` gives a folder's and a glob's files in their hours' order).
    Each record is held as a 64-bit hash of the two, in sorted runs that merge as they grow, some 8 bytes a record:
    held as strings, an hour at 3,000 records a second was 2 GB. Two records of one hour taken for one another need
    64 equal bits: among ten million, about one chance in 300,000."""

    #: Hours held: the one being read, the one before it (requests it began), and one more for files out of order.
    HOURS = 3

    def __init__(self) -> None:
        self._hours: dict[Hashable, list[np.ndarray]] = {}  # by hour, the most recently read last: sorted runs of hashes

    def repeat(self, hour: Hashable, request_id: str, operation_count: int) -> bool:
        """Whether the record was read already within ``hour`` (its start time's: the same label for the same hour)."""
        return bool(self.repeated([hour], [request_id], np.array([operation_count], dtype=np.int64)))

    def repeated(self, hours: Sequence[Hashable], ids: Sequence[str], counts: Sequence[str] | np.ndarray) -> list[int]:
        """Which of these records, in their order, were read already within their hour (the first of two in them
        is not). ``counts``: their operation counts, as logged or as numbers."""
        named = np.asarray(hours)
        counted = counts if isinstance(counts, np.ndarray) else np.array([int(c or 0) for c in counts], dtype=np.int64)
        # an id's hash and its count in one number: the same two, the same key
        keys = np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids)) * _SPREAD + counted.astype(np.int64)
        if not len(keys):
            return []
        order = np.argsort(named, kind="stable")  # each hour's records together, in their order
        ranked = named[order]
        edges = [0, *(np.flatnonzero(ranked[1:] != ranked[:-1]) + 1).tolist(), len(keys)]
        found: list[int] = []
        for start, end in zip(edges, edges[1:], strict=False):
            at = order[start:end]
            found += at[self._within(ranked[start].item(), keys[at])].tolist()
        return sorted(found)

    def _within(self, hour: Hashable, keys: np.ndarray) -> np.ndarray:
        """The positions of ``keys`` read already within ``hour``; the rest held as read."""
        runs = self._hours.pop(hour, [])
        order = np.argsort(keys, kind="stable")
        ranked = keys[order]  # sorted: each run searched for sorted needles stays in cache
        again = np.zeros(len(keys), dtype=bool)
        again[order[1:][ranked[1:] == ranked[:-1]]] = True  # a later copy within these
        for run in runs:
            at = np.minimum(np.searchsorted(run, ranked), len(run) - 1)
            again[order[run[at] == ranked]] = True
        fresh = np.sort(keys[~again])  # none twice, none in a run: the runs never share a hash
        runs = [*runs, fresh] if len(fresh) else runs
        while len(runs) > 1 and len(runs[-2]) <= 2 * len(runs[-1]):
            runs[-2:] = [np.sort(np.concatenate(runs[-2:]), kind="stable")]
        self._hours[hour] = runs  # the most recently read, last
        while len(self._hours) > self.HOURS:
            del self._hours[next(iter(self._hours))]
        return np.flatnonzero(again)


def hour_of(time: float) -> int:
    """The hour a record's start time (UTC, epoch seconds) falls in, as the service's hour of records: one label."""
    return int(time // 3600)


def duplicate(request_id: str, operation_count: str) -> Unreadable:
    return Unreadable(DUPLICATE, f"request id {request_id}, operation count {operation_count}")


def classic_records(lines: Iterable[str], seen: HourSeen | None = None) -> Iterator[LogRecord | Unreadable]:
    """The records of classic log lines; a line with too few fields or one that does not parse is ``Unreadable``, a
    repeated record within its hour (``seen``: the reader's, across its blocks) an ``Unreadable`` of reason
    ``DUPLICATE``."""
    seen = HourSeen() if seen is None else seen
    for line in lines:
        if not line.strip():
            continue
        try:
            row = next(csv.reader((line,), delimiter=";", quotechar='"'), [])
        except csv.Error:  # a field over the reader's limit
            row = []
        if not row or row[0] not in ("1.0", "2.0") or len(row) < len(CLASSIC_FIELDS):
            yield Unreadable(f"not a version 1.0 or 2.0 record of {len(CLASSIC_FIELDS)} fields", line)
            continue
        try:
            started = _field(row, "request-start-time")
            when = parse_time(started)
            key = (row[_AT["request-id-header"]], row[_AT["operation-count"]])
            count = _whole(key[1])
            sizes = [_whole(row[_AT[name]]) for name in SIZES]
            status = row[_AT["http-status-code"]]
            status_code = logged_status(int(status)) if status.isascii() and status.isdigit() else None
            duration_ms = _number(row[_AT["end-to-end-latency-in-ms"]])
            server_latency_ms = _number(row[_AT["server-latency-in-ms"]])
            if seen.repeat(hour_of(when), key[0], count):
                yield duplicate(*key)
                continue
            yield LogRecord(
                time=when,
                operation=row[_AT["operation-type"]],
                status=status_code,
                status_text=row[_AT["request-status"]],
                uri=_field(row, "request-url"),
                object_key=_field(row, "requested-object-key"),
                duration_ms=duration_ms,
                server_latency_ms=server_latency_ms,
                request_body=sizes[0],
                response_body=sizes[1] - sizes[2],
                client_request_id=_field(row, "client-request-id"),
                request_id=key[0],
                operation_count=count,
            )
        except (ValueError, OverflowError):
            yield Unreadable("a classic record with a value that does not parse", line)
