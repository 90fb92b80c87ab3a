"""The forms of an account's request logs ``loadtest traffic`` reads, and the times they write: declared here, below
the options that name them (``--format``, ``--since``) and the wing that reads them (``traffic``).
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime
from functools import lru_cache

__all__ = ["FORMS", "parse_time"]

#: Azure Monitor's archived diagnostic logs, a Log Analytics export (CSV, JSON), Storage Analytics' classic logs.
FORMS = ("diagnostic", "analytics-csv", "analytics-json", "classic")


@lru_cache(maxsize=4096)
def _minute(prefix: str) -> int:
    """Epoch seconds of ``YYYY-MM-DDTHH:MM`` (UTC): records of one minute share it."""
    year, month, day = int(prefix[0:4]), int(prefix[5:7]), int(prefix[8:10])
    return calendar.timegm((year, month, day, int(prefix[11:13]), int(prefix[14:16]), 0, 0, 0, 0))


def parse_time(text: str) -> float:
    """A logged time as epoch seconds: ISO 8601 in UTC (``2026-11-24T13:04:05.1234567Z``, the logs' own; a space for
    the ``T`` and an offset are read too) or the portal's CSV export (``11/24/2026, 1:04:05.123 PM``). ValueError else."""
    text = text.strip().strip('"')
    if len(text) >= 19 and text[4] == "-" and text[10] in "T ":
        seconds = _minute(text[:16]) + int(text[17:19])
        rest = text[19:]
        fraction = ""
        if rest.startswith("."):
            digits = len(rest) - len(rest[1:].lstrip("0123456789"))
            fraction, rest = rest[1:digits], rest[digits:]
        if rest not in ("", "Z", "+00:00", "+0000"):
            return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        return seconds + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)
    for form in ("%m/%d/%Y, %I:%M:%S.%f %p", "%m/%d/%Y, %I:%M:%S %p", "%m/%d/%Y %I:%M:%S %p"):
        try:
            return datetime.strptime(text, form).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    raise ValueError(f"not a time the logs write: {text[:40]!r}")
