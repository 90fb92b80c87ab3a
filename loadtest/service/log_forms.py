"""The forms of an account's request logs ``loadtest traffic`` reads, and the times they write: declared here, below
the options that name them (``--format``, ``--since``) and the wing that reads them (``traffic``).
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime
from functools import lru_cache

__all__ = ["CLASSIC_FIELDS", "EARLIEST", "FORMS", "LATEST", "parse_time", "utc_text"]

#: Azure Monitor's archived diagnostic logs, a Log Analytics export (CSV, JSON), Storage Analytics' classic logs.
FORMS = ("diagnostic", "analytics-csv", "analytics-json", "classic")
#: Storage Analytics' classic records: version 1.0's fields, in order (``<version>;<request-start-time>;…``), what
#: ``traffic.classic`` reads and the emulator's ``--request-log`` writes.
CLASSIC_FIELDS = (
    "version", "request-start-time", "operation-type", "request-status", "http-status-code", "end-to-end-latency-in-ms",
    "server-latency-in-ms", "authentication-type", "requester-account-name", "owner-account-name", "service-type",
    "request-url", "requested-object-key", "request-id-header", "operation-count", "requester-ip-address",
    "request-version-header", "request-header-size", "request-packet-size", "response-header-size",
    "response-packet-size", "request-content-length", "request-md5", "server-md5", "etag-identifier",
    "last-modified-time", "conditions-used", "user-agent-header", "referrer-header", "client-request-id",
)  # fmt: skip
#: The times a log may hold, epoch seconds: the calendar's years 1 to 9999 in UTC (Python's and Kusto's alike).
EARLIEST = datetime(1, 1, 1, tzinfo=UTC).timestamp()
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC).timestamp()  # below the next year's in float64
#: The logs' own form, ASCII digits only: ``2026-11-24T13:04:05.1234567Z`` (a space for the ``T``, an offset too).
_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(Z|[+-][0-9]{2}:?[0-9]{2})?")
_PORTAL = ("%m/%d/%Y, %I:%M:%S.%f %p", "%m/%d/%Y, %I:%M:%S %p", "%m/%d/%Y %I:%M:%S %p")


@lru_cache(maxsize=4096)
def _minute(year: str, month: str, day: str, hour: str, minute: str) -> int:
    """Epoch seconds of a minute (UTC): records of one minute share it. ValueError for one no calendar holds (February
    31st, hour 25), never rolled over into the next."""
    return calendar.timegm(datetime(int(year), int(month), int(day), int(hour), int(minute)).timetuple())


def _offset(zone: str | None) -> int:
    """A UTC offset (``Z``, ``+01:00``, ``-0500``) in seconds east; ValueError for one no clock has."""
    if zone in (None, "Z"):
        return 0
    hours, minutes = int(zone[1:3]), int(zone[-2:])
    if hours > 23 or minutes > 59:
        raise ValueError(f"not a UTC offset: {zone!r}")
    return (hours * 3600 + minutes * 60) * (-1 if zone[0] == "-" else 1)


def _within(epoch: float) -> float:
    if not EARLIEST <= epoch <= LATEST:
        raise ValueError("a time outside the years 1 to 9999 (UTC)")
    return epoch


def parse_time(text: str) -> float:
    """A logged time as epoch seconds: ISO 8601 (``2026-11-24T13:04:05.1234567Z``, the logs' own; a space for the
    ``T`` and an offset are read too) or the portal's CSV export (``11/24/2026, 1:04:05.123 PM``), within the years 1
    to 9999 in UTC. ValueError for anything else, a date or time no calendar holds among them."""
    text = text.strip().strip('"')
    if found := _ISO.fullmatch(text):
        year, month, day, hour, minute, second, fraction, zone = found.groups()
        if int(second) > 59:
            raise ValueError(f"not a time: {text[:40]!r}")
        seconds = _minute(year, month, day, hour, minute) + int(second) - _offset(zone)
        return _within(seconds + (float(fraction) if fraction else 0.0))
    if len(text) >= 19 and text[4] == "-" and text[10] in "T ":  # ISO 8601's other forms (``+01`` …)
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return _within((when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp())
    for form in _PORTAL:
        try:
            return datetime.strptime(text, form).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    raise ValueError(f"not a time the logs write: {text[:40]!r}")


def utc_text(epoch: float) -> str:
    """Epoch seconds as the logs write a time, to the second: ``2026-11-24T13:04:05Z``."""
    return datetime.fromtimestamp(epoch // 1, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
