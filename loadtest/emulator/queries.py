"""What a query costs the emulator: the rows it scans, in each partition it reads, as the report counts them.

The filter is read once, by the report's own parser (``query_reach``). A query is admitted on the partition it starts
at: its ``PartitionKey eq``, its continuation's NextPartitionKey, its inclusive lower PartitionKey bound; without any
(a table scan), on its answer's first row. Its answer is charged the rows it read per PartitionKey: the rows it
returned, or, when a condition other than its keys filters them, the rows of its key range from where it started to
where it stopped (its answer's continuation, else the range's end). Those the relay lists from upstream (``listing``:
keys only, 1,000 a page), after the answer has gone to the client: exact whatever the filter, and Azurite's answer
untouched. Point reads, writes and queries on keys alone cost nothing more. Azurite's continuation tokens are the
keys, base64-encoded.
"""

from __future__ import annotations

import binascii
import json
from base64 import b64decode
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from ..service.entities import MAX_PAGE_ENTITIES
from ..workload.query_reach import reach_of

__all__ = ["Query", "continuation", "is_query", "listed", "query_of", "returned", "rows_of"]

_RESUME = ("NextPartitionKey", "NextRowKey")
_ODATA = ("$filter", "$select", "$top")
_NEXT = b"x-ms-continuation-next"


@dataclass(frozen=True, slots=True)
class Query:
    """A query let through: where it starts, and how its answer is charged."""

    start: str | None  # the partition it was admitted on before it was sent; None: on its answer's first row
    partition: str | None  # the one PartitionKey it reads (rows projected without their PartitionKey are its)
    listing: str | None  # the query string listing its key range's keys, when it scans more than it returns
    resume: str  # the request's continuation parameters, as sent ("" on a first page)
    forward: str | None  # the query string sent upstream instead of the request's: its $top cut to the page's rows


def is_query(path: str) -> bool:
    """A GET of a table's entities (``/account/table()``), not of one entity, nor of the table list."""
    name = path.rpartition("/")[2]
    return bool(name) and name != "Tables" and (name.endswith("()") or "(" not in name)


def query_of(query: str, page_rows: int = 0) -> Query:
    """A query's request parameters read: its key range (``query_reach``; an unreadable filter costs what it
    returns), its start, and with ``page_rows`` the $top that cuts its answer short (as Azure does at partition-server
    boundaries: a short page and a continuation token)."""
    params = query.split("&") if query else []
    where, top, resume, kept = None, None, [], []
    for param in params:
        name = param.partition("=")[0]
        if name == "$filter":
            where = unquote(param[8:])
        elif name == "$top":
            top = param[5:]
        if name in _RESUME:
            resume.append(param)
        elif name not in _ODATA:
            kept.append(param)  # a SAS's parameters: the listing is signed as the request is
    try:
        reach = reach_of(where)
    except ValueError:
        reach = None
    start = next((_key(unquote(param[17:])) for param in resume if param.startswith("NextPartitionKey=")), None)
    if start is None and reach is not None:
        low, low_in, _, _ = reach.pk
        start = reach.partition or (low if low_in else None)
    listing = None
    if reach is not None and reach.filtered:
        seek = reach.key_filter()
        listing = "&".join(
            [
                *kept,
                *([f"$filter={quote(seek, safe='')}"] if seek else []),
                "$select=PartitionKey,RowKey",
                f"$top={MAX_PAGE_ENTITIES}",
            ]
        )
    forward = None
    if page_rows and (top is None or not top.isdigit() or int(top) > page_rows):
        forward = "&".join([p for p in params if not p.startswith("$top=")] + [f"$top={page_rows}"])
    return Query(start, reach.partition if reach else None, listing, "&".join(resume), forward)


def rows_of(body: bytes) -> list[dict[str, Any]] | None:
    try:
        rows = json.loads(body).get("value")
    except (ValueError, AttributeError):
        return None
    return rows if isinstance(rows, list) else None


def returned(rows: list[dict[str, Any]], partition: str | None) -> Counter[str | None]:
    """The rows an answer returned, per PartitionKey: a query on keys alone scans what it returns."""
    if partition is not None:  # one partition's: no row to look at
        return Counter({partition: len(rows)})
    return Counter(row.get("PartitionKey") for row in rows)


def continuation(lines: list[bytes]) -> tuple[str, tuple[str, str] | None]:
    """An answer's continuation: as the next page's parameters ("" at the end), and as the keys it resumes at."""
    found: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name.startswith(_NEXT):
            found["NextPartitionKey" if name.endswith(b"partitionkey") else "NextRowKey"] = value.strip().decode("latin-1")
    if "NextPartitionKey" not in found:
        return "", None
    params = "&".join(f"{name}={quote(value, safe='')}" for name, value in found.items())
    return params, (_key(found["NextPartitionKey"]), _key(found.get("NextRowKey", "")))


def listed(counted: Counter[str | None], body: bytes, stop: tuple[str, str] | None) -> bool:
    """Count one page of a listing's keys per PartitionKey, up to ``stop`` (where the answer charged stopped); True
    once past it."""
    for row in rows_of(body) or ():
        pk = row.get("PartitionKey")
        if stop is not None and (pk, row.get("RowKey", "")) >= stop:
            return True
        counted[pk] += 1
    return False


def _key(token: str) -> str:
    """A continuation token's key: Azurite's are base64 (Azure's are opaque: taken as they are)."""
    try:
        return b64decode(token, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return token
