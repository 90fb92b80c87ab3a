"""What an application's OData filter reaches: its key conditions, the query's kind, and the rows it scans.

The docs count a query's entities as the rows it *scans*, not those it returns. The service
seeks on key conditions (PartitionKey, then RowKey) and scans every row inside them; any other
condition (a property, ``ne``, ``not``, an ``or``) only filters what was scanned. So from the
filter's top-level ``and`` terms this module finds the key range, and from what the run seeded
how many rows that range holds: an estimate, marked as one wherever it is used.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..counting.buckets import OTHER
from .keys import KeyStrategy

__all__ = ["REACHES", "Reach", "reach_of"]

#: A query's kinds, best first (the docs' list): one entity, a range in one partition, a range of partitions, the table.
REACHES = ("point", "range", "partitions", "table")
_KEYS = ("PartitionKey", "RowKey")
_BOUNDS = {"gt", "ge", "lt", "le", "eq"}
_TOKEN = re.compile(r"\s*(?:([A-Za-z]+'(?:[^']|'')*'|'(?:[^']|'')*')|([()])|([^\s()']+))")


@dataclass(frozen=True)
class Reach:
    """The key range a filter selects: ``low``/``high`` bounds per key (inclusive flags), and whether anything
    else filters the rows scanned inside it (``filtered``)."""

    pk: tuple[str | None, bool, str | None, bool] = (None, True, None, True)  # low, low inclusive, high, high inclusive
    rk: tuple[str | None, bool, str | None, bool] = (None, True, None, True)
    filtered: bool = False

    @property
    def partition(self) -> str | None:
        """The one PartitionKey selected (``eq``), or None."""
        low, low_in, high, high_in = self.pk
        return low if low is not None and low == high and low_in and high_in else None

    @property
    def kind(self) -> str:
        """point, range, partitions or table (``REACHES``)."""
        if self.partition is not None:
            low, low_in, high, high_in = self.rk
            return "point" if low is not None and low == high and low_in and high_in else "range"
        return "partitions" if self.pk != Reach.pk else "table"

    def key_filter(self) -> str:
        """The OData filter of the key range the service seeks and scans (nothing else filters it): inside one
        partition its RowKey bounds too, across partitions only the PartitionKey bounds (each one is scanned whole, as
        ``known_by_partition`` counts). Empty for the whole table."""
        terms = _bound_terms("PartitionKey", self.pk)
        if self.partition is not None:
            terms += _bound_terms("RowKey", self.rk)
        return " and ".join(terms)

    def counted(self, touched: Counter[str], keys: KeyStrategy | None, seeded: int, *, cut_short: bool) -> dict[str, Any]:
        """A query's request-event fields from the rows it returned per PartitionKey (``touched``): entities are the
        rows scanned, per partition where it spans several. A filtered query counts the rows seeded in its key range
        (``estimated``); one cut short by ``$top`` stopped scanning at a row nobody knows, so it counts what it returned."""
        returned = sum(touched.values())
        spread = dict(touched)
        fields: dict[str, Any] = {"returned": returned, "reach": self.kind}
        if self.filtered and keys is not None and not cut_short:
            known = self.known_by_partition(keys, seeded)
            spread = {p: max(n, touched.get(p, 0)) for p, n in known.items() if n or p in touched}
            spread.update({p: n for p, n in touched.items() if p not in spread})
            fields["estimated"] = True
        fields["entities"] = sum(spread.values())
        if self.partition is None:
            fields["partition"] = min(touched) if touched else "(table)"  # filed under its first key; rows go where they were
            fields["partitions"] = spread
        return fields

    def known_by_partition(self, keys: KeyStrategy, seeded: int) -> dict[str, int]:
        """The seeded rows inside the key range, per PartitionKey: what the service scans to answer (an estimate).

        Across partitions the service scans each one whole (a RowKey bound only seeks inside the first and last);
        with per-entity keys the run cannot tell cheaply which keys fall inside, so it counts the table's rows."""
        if self.partition is not None:
            return {self.partition: _inside(self.rk, keys.seeded_rows(self.partition, seeded), keys.row)}
        partitions = keys.keys()
        if partitions is None:
            return {OTHER: seeded}
        return {p: keys.seeded_rows(p, seeded) for p in partitions if _within(self.pk, p)}


def _bound_terms(key: str, bounds: tuple[str | None, bool, str | None, bool]) -> list[str]:
    low, low_in, high, high_in = bounds
    if low is not None and low == high and low_in and high_in:
        return [f"{key} eq {_quoted(low)}"]
    terms = [] if low is None else [f"{key} {'ge' if low_in else 'gt'} {_quoted(low)}"]
    return terms + ([] if high is None else [f"{key} {'le' if high_in else 'lt'} {_quoted(high)}"])


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _within(bounds: tuple[str | None, bool, str | None, bool], value: str) -> bool:
    low, low_in, high, high_in = bounds
    if low is not None and (value < low or (value == low and not low_in)):
        return False
    return not (high is not None and (value > high or (value == high and not high_in)))


def _inside(bounds: tuple[str | None, bool, str | None, bool], rows: int, row: Any) -> int:
    """How many of the RowKeys ``row(0) < row(1) < … < row(rows - 1)`` fall inside ``bounds`` (by bisection)."""
    low, low_in, high, high_in = bounds
    start = 0 if low is None else bisect_left(range(rows), low, key=row)
    if low is not None and not low_in and start < rows and row(start) == low:
        start += 1
    end = rows if high is None else bisect_left(range(rows), high, key=row)
    if high is not None and high_in and end < rows and row(end) == high:
        end += 1
    return max(0, end - start)


def reach_of(where: str | None, parameters: Mapping[str, Any] | None = None) -> Reach:
    """The key range of a filter (``@name`` values from ``parameters``). ValueError names what it cannot read."""
    if not where or not where.strip():
        return Reach()
    terms = _terms(where)
    values = dict(parameters or {})
    bounds = {key: [None, True, None, True] for key in _KEYS}
    filtered = False
    for term in terms:
        if term is None:
            filtered = True
            continue
        key, op, value = term
        if value.startswith("@"):
            if value[1:] not in values:
                raise ValueError(f"query filter: parameter {value} is not in parameters ({', '.join(sorted(values)) or 'none'})")
            value = values[value[1:]]
            if not isinstance(value, str):
                filtered = True  # a key compared with a number or a date matches nothing: nothing to seek on
                continue
        else:
            value = value[1:-1].replace("''", "'")
        low, low_in, high, high_in = bounds[key]
        if op in ("gt", "ge", "eq") and (low is None or value > low or (value == low and op == "gt")):
            bounds[key][0:2] = [value, op != "gt"]
        if op in ("lt", "le", "eq") and (high is None or value < high or (value == high and op == "lt")):
            bounds[key][2:4] = [value, op != "lt"]
    pk, rk = (tuple(bounds[key]) for key in _KEYS)
    return Reach(pk=pk, rk=rk, filtered=filtered)  # type: ignore[arg-type]


@lru_cache(maxsize=256)
def _terms(where: str) -> tuple[tuple[str, str, str] | None, ...]:
    """The top-level ``and`` terms: (key, op, value) for a key bound, None for anything else. Cached: a workload
    sends the same few filters over and over, with different parameters."""
    return tuple(_collect(_tokens(where)))


def _collect(tokens: list[str]) -> list[tuple[str, str, str] | None]:
    terms: list[tuple[str, str, str] | None] = []
    for group in _split(tokens, "and"):
        while len(group) > 2 and group[0] == "(" and _closing(group, 0) == len(group) - 1:
            group = group[1:-1]
        if len(_split(group, "and")) > 1:
            terms.extend(_collect(group))  # (a and b) inside an and: its terms are top-level too
        elif len(group) == 3 and group[0] in _KEYS and group[1].lower() in _BOUNDS and _value(group[2]):
            terms.append((group[0], group[1].lower(), group[2]))
        else:
            terms.append(None)  # a property, ne, not, an or: filters the rows scanned, seeks nothing
    return terms


def _value(token: str) -> bool:
    return token.startswith("@") or (token.startswith("'") and token.endswith("'") and len(token) >= 2)


def _tokens(where: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(where):
        match = _TOKEN.match(where, pos)
        if match is None or match.end() == pos:
            if where[pos:].strip():
                raise ValueError(f"query filter: cannot read {where[pos : pos + 20]!r} (an unclosed quote?)")
            break
        tokens.append(next(g for g in match.groups() if g))
        pos = match.end()
    return tokens


def _closing(tokens: list[str], start: int) -> int:
    depth = 0
    for i in range(start, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[i], 0)
        if depth == 0:
            return i
    raise ValueError("query filter: unbalanced parentheses")


def _split(tokens: list[str], word: str) -> list[list[str]]:
    """Split at ``word`` (and / or) outside parentheses."""
    parts: list[list[str]] = [[]]
    depth = 0
    for token in tokens:
        depth += {"(": 1, ")": -1}.get(token, 0)
        if depth < 0:
            raise ValueError("query filter: unbalanced parentheses")
        if depth == 0 and token.lower() == word:
            parts.append([])
        else:
            parts[-1].append(token)
    if depth:
        raise ValueError("query filter: unbalanced parentheses")
    return parts
