"""A JSON value read against its declared type: ``read`` checks it, making the dataclasses on the way, and names the
first field that is wrong in a ``ValueError`` (``results.timeseries[3].requests: missing``), which ``loadtest report``
and ``loadtest merge`` say in one line. ``results_schema`` declares the form of results.json that it reads.

The rules:

- a key a ``TypedDict`` marks ``NotRequired`` came later than its section: results.json written before it lack it,
  and its readers read it with a default (``row.get("rows", 0)``); every other key must be there;
- fields the form does not declare are read past: fields may be added freely (a field added to a section is checked
  once declared in its ``TypedDict``, ``NotRequired`` since results.json written before it lack it);
- a section left at its default (an empty object) is the section's absence (a run without workers, a results.json
  written before the section);
- a number is finite; a whole number is neither a fraction nor true/false, and a 64-bit integer (as a number too: the
  columns it goes into hold no more); ``Literal`` and ``StrEnum`` types name the values allowed; ``Annotated[T,
  Check(...)]`` adds a rule (a time since the epoch, a second of the run, a histogram's encoding);
- JSON nested past Python's parser is text that is not JSON (``loads``).

Reading is compiled: each declared type becomes a checker (``column_checkers``), made once, that tests a whole column
of values at a time and, only when that test fails, walks the values one by one to name the first wrong field. A
timeseries of 100,000 rows is checked in a fraction of the time ``json.loads`` takes to parse it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields, is_dataclass
from enum import Enum
from functools import cache
from itertools import chain, repeat
from operator import contains, itemgetter, methodcaller
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints, is_typeddict

from .column_checkers import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    OBJECT,
    STR,
    Checker,
    Wrong,
    at_key,
    dict_of,
    guarded,
    list_of,
    one_of,
    ruled,
    shown,
    tuple_of,
    union_of,
)

__all__ = ["Check", "loads", "read"]


@dataclass(frozen=True)
class Check:
    """A rule beside a type (``Annotated[float, Check(...)]``): ``test`` a value of the type, ``what`` it must be; ``at``,
    where a rule over a whole object fails for one of its fields, the steps to it (``[".cpu"]``), so the message names
    that field."""

    test: Callable[[Any], bool]
    what: str
    at: Callable[[Any], list[str]] | None = None


def loads(text: str) -> Any:
    """JSON's value, as ``json.loads`` reads it; nesting deeper than its parser follows (Python's stack, some 1,000
    levels) a ``ValueError`` like any other text that is not JSON, not a ``RecursionError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested deeper than Python's parser reads (results.json nests a few levels)") from None


def read(kind: Any, value: Any, where: str) -> Any:
    """``value`` checked against ``kind`` (dataclasses made on the way), else a ``ValueError`` naming the first field
    that is wrong, from ``where`` on: ``results.partitions[3].ratio: a number, not "x"``."""
    checker = _checker(kind)
    try:
        return value if not checker.converts and checker.test([value]) else checker.check(value)
    except Wrong as wrong:
        raise ValueError(f"{where}{''.join(reversed(wrong.path))}: {wrong.said}") from None


class _Absent:
    """A key a row does not have (for the column of an optional one)."""


_ABSENT = _Absent()


def _typed_dict(kind: type) -> Checker:
    """A JSON object with the declared keys (the ``NotRequired`` ones where present), each of its type; others are
    read past. The object itself is kept (its values are checked, not made)."""
    hints, required = get_type_hints(kind, include_extras=True), kind.__required_keys__
    declared = [(name, name in required, _checker(_unwrapped(hint))) for name, hint in hints.items()]

    groups: dict[Checker, list[str]] = {}  # keys of one type together: one pass over the column for each type
    for name, _, checker in declared:
        groups.setdefault(checker, []).append(name)
    together = [(checker, itemgetter(*names), len(names) > 1) for checker, names in groups.items()]

    def test(column: list) -> bool:
        if not set(map(type, column)) <= OBJECT:
            return False
        try:
            for checker, get, many in together:
                values = map(get, column)
                if not checker.test(list(chain.from_iterable(values)) if many else list(values)):
                    return False
            return True
        except KeyError:  # some lack a key: a required one (no), or an optional one (read where present)
            return keyed(column)

    def keyed(column: list) -> bool:
        for name, needed, checker in declared:
            if needed or all(map(contains, column, repeat(name))):
                values = list(map(itemgetter(name), column))  # KeyError: one is missing (the test says no)
            else:
                values = [v for v in map(methodcaller("get", name, _ABSENT), column) if v is not _ABSENT]
            if not checker.test(values):
                return False
        return True

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise Wrong(f"an object, not {shown(value)}")
        for name, needed, checker in declared:
            if name not in value:
                if needed:
                    raise Wrong("missing").at(at_key(name))
                continue
            try:
                checker.check(value[name])
            except Wrong as wrong:
                raise wrong.at(at_key(name)) from None
        return value

    # its fields of one value or a few (``fits: Literal[True]``): in a union of forms, an object holding them is the
    # form it meant to be, and that form's complaint is the one said
    tags = tuple((name, frozenset(get_args(hint))) for name, hint in hints.items() if get_origin(_unwrapped(hint)) is Literal)
    return Checker(guarded(test), check, "an object", OBJECT, tags=tags)


def _dataclass(kind: type) -> Checker:
    """A JSON object made into the dataclass ``kind``: its fields without a default must be there; a field left at its
    default (an empty object) stays at it."""
    hints = get_type_hints(kind, include_extras=True)
    declared = []
    for f in fields(kind):
        if f.metadata.get("beside"):
            continue  # kept in a file beside the JSON (the series): its reader reads it
        needed = f.default is MISSING and f.default_factory is MISSING
        empty = f.default_factory() if f.default_factory in (dict, list) else MISSING
        declared.append((f.name, needed, empty, _checker(hints[f.name])))

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise Wrong(f"an object, not {shown(value)}")
        made = {}
        for name, needed, empty, checker in declared:
            if name not in value:
                if needed:
                    raise Wrong("missing").at(at_key(name))
                continue
            x = value[name]
            if type(x) is type(empty) and not x:  # the section's absence
                made[name] = x
                continue
            try:
                made[name] = x if not checker.converts and checker.test([x]) else checker.check(x)
            except Wrong as wrong:
                raise wrong.at(at_key(name)) from None
        return kind(**made)

    def test(column: list) -> bool:
        return False  # always made, by ``check``

    return Checker(test, check, "an object", OBJECT, converts=True)


def _unwrapped(hint: Any) -> Any:
    """A TypedDict key's type without its ``Required`` / ``NotRequired`` (the dict says which keys are required)."""
    while get_origin(hint) in (Required, NotRequired):
        hint = get_args(hint)[0]
    return hint


@cache
def _checker(kind: Any) -> Checker:
    """The checker of a declared type, made once."""
    origin, args = get_origin(kind), get_args(kind)
    if kind is Any:
        return ANY
    if kind in (int, float, str, bool, NoneType, None):
        return {int: INT, float: FLOAT, str: STR, bool: BOOL}.get(kind, NONE)
    if origin is Annotated:
        checker = _checker(args[0])
        for rule in (a for a in kind.__metadata__ if isinstance(a, Check)):
            checker = ruled(checker, rule.test, rule.what, rule.at)
        return checker
    if origin in (Union, UnionType):
        return union_of(tuple(_checker(a) for a in args))
    if origin is Literal:
        return one_of(args)
    if isinstance(kind, type) and issubclass(kind, Enum):
        return one_of(tuple(m.value for m in kind), kind)
    if is_typeddict(kind):
        return _typed_dict(kind)
    if isinstance(kind, type) and is_dataclass(kind):
        return _dataclass(kind)
    if origin is list or kind is list:
        return list_of(_checker(args[0]) if args else ANY)
    if origin is tuple:
        return tuple_of(tuple(_checker(a) for a in args))
    if origin is dict or kind is dict:
        return dict_of(_checker(args[0]) if args else ANY, _checker(args[1]) if args else ANY)
    raise TypeError(f"typed_reader cannot check {kind!r}")  # a type the form should not declare
