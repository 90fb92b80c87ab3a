"""Checkers of JSON values, one per declared type, compiled once: each tests a whole column of values in one pass
(every row's ``requests`` of a timeseries at C speed) and checks one value only when that test fails, to name what is
wrong and where.

These are the building blocks; ``typed_reader`` makes one for each declared type and reads a value with it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from types import NoneType
from typing import Any

__all__ = [
    "ANY",
    "BOOL",
    "FLOAT",
    "INT",
    "LIST",
    "NONE",
    "OBJECT",
    "STR",
    "Checker",
    "WHOLE_RANGE",
    "Wrong",
    "at_key",
    "dict_of",
    "guarded",
    "list_of",
    "one_of",
    "ruled",
    "scalar",
    "shown",
    "tuple_of",
    "union_of",
]


class Wrong(Exception):
    """What is wrong (``said``) and where, from the value up (``path``, appended on the way out)."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said, self.path = said, []

    def at(self, step: str) -> Wrong:
        self.path.append(step)
        return self


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def at_key(name: Any) -> str:
    """A key as a step of the path to what is wrong: ``.requests``, or ``["a key"]`` where it is no name."""
    return f".{name}" if isinstance(name, str) and _NAME.match(name) else f"[{shown(name)}]"


def shown(value: Any) -> str:
    """A value as a message quotes it: its JSON, cut to 40 characters (one line: JSON escapes line breaks); a value
    JSON cannot say briefly (a whole number of thousands of digits, nesting past Python's stack) by its kind."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a whole number of {value.bit_length():,} bits"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = "[...]" if isinstance(value, list) else "{...}" if isinstance(value, dict) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Checker:
    """One declared type, compiled: ``test`` a whole column of values (True when every one conforms; fast, never
    raises), ``check`` one value (the value, made where the type is a dataclass or an enum, else ``Wrong``)."""

    test: Callable[[list], bool]
    check: Callable[[Any], Any]
    what: str  # what a value must be, in words
    kinds: frozenset  # the Python types a JSON value of it has (a union asks the option of the value's type)
    converts: bool = False  # ``check`` makes a new value: a container of it must be rebuilt
    #: an object's fields of one value or a few, and those values (``TypedDict``'s ``Literal`` fields): a union's
    #: object that holds them is of this form
    tags: tuple[tuple[str, frozenset], ...] = ()


def guarded(test: Callable[[list], bool]) -> Callable[[list], bool]:
    def guarded(column: list) -> bool:
        try:
            return test(column)
        except Exception:  # noqa: BLE001 -- a column that breaks the fast test is answered one value at a time
            return False

    return guarded


#: The whole numbers read (in a field of whole numbers or of numbers): a 64-bit integer's, as the columns they go into
#: (numpy's, pandas', Arrow's) hold them.
WHOLE_RANGE = (-(2**63), 2**63 - 1)


def scalar(types: frozenset, what: str, finite: bool = False) -> Checker:
    """Values of these Python types (a JSON document's own: ``test`` asks for exactly them, ``check`` takes their
    subclasses too, a ``StrEnum`` for a string; ``bool`` is never a number); numbers finite where ``finite``; whole
    numbers within ``WHOLE_RANGE``."""
    subclasses = tuple(types)
    low, high = WHOLE_RANGE
    whole = int in types
    within = f"{what} from -2^63 to 2^63 - 1" if float not in types else f"{what} (whole ones from -2^63 to 2^63 - 1)"

    def test(column: list) -> bool:
        kinds = set(map(type, column))
        if not kinds <= types:
            return False
        if whole and int in kinds and (min(column) < low or max(column) > high):
            return False  # (or a float past them beside it: the slower check, which tells them apart)
        return not finite or all(map(math.isfinite, column))

    def check(value: Any) -> Any:
        if not isinstance(value, subclasses) or isinstance(value, bool) and bool not in types:
            raise Wrong(f"{what}, not {shown(value)}")
        if whole and isinstance(value, int) and not low <= value <= high:
            raise Wrong(f"{within}, not {shown(value)}")
        if finite and isinstance(value, float) and not math.isfinite(value):
            raise Wrong(f"{what}, not {shown(value)}")
        return value

    return Checker(guarded(test), check, what, types)


INT = scalar(frozenset({int}), "a whole number")
FLOAT = scalar(frozenset({int, float}), "a number", finite=True)
STR = scalar(frozenset({str}), "a string")
BOOL = scalar(frozenset({bool}), "true or false")
NONE = scalar(frozenset({NoneType}), "null")
ANY = Checker(lambda column: True, lambda value: value, "anything", frozenset())
OBJECT, LIST = frozenset({dict}), frozenset({list})


def one_of(values: tuple, convert: Callable[[Any], Any] | None = None) -> Checker:
    allowed, what = frozenset(values), "one of " + ", ".join(str(v) for v in values)
    kinds = frozenset(type(v) for v in values)

    def test(column: list) -> bool:
        return set(map(type, column)) <= kinds and set(column) <= allowed

    def check(value: Any) -> Any:
        if not isinstance(value, tuple(kinds)) or isinstance(value, bool) and bool not in kinds or value not in allowed:
            raise Wrong(f"{what}, not {shown(value)}")
        return convert(value) if convert else value

    return Checker(guarded(test), check, what, kinds, converts=convert is not None)


def list_of(item: Checker) -> Checker:
    def test(column: list) -> bool:
        return set(map(type, column)) <= LIST and item.test(list(chain.from_iterable(column)))

    def check(value: Any) -> Any:
        if not isinstance(value, list):
            raise Wrong(f"a list, not {shown(value)}")
        if not item.converts and item.test(value):
            return value
        made, i = [], 0
        try:
            for i, x in enumerate(value):  # noqa: B007 -- i names the item that is wrong
                made.append(item.check(x))
        except Wrong as wrong:
            raise wrong.at(f"[{i}]") from None
        return made if item.converts else value

    return Checker(guarded(test), check, f"a list of {item.what}", LIST, item.converts)


def tuple_of(items: tuple[Checker, ...]) -> Checker:
    """A JSON list of ``len(items)`` values, each of its own type."""
    n, what = len(items), f"a list of {len(items)} ({', '.join(i.what for i in items)})"

    def test(column: list) -> bool:
        if not set(map(type, column)) <= LIST or not set(map(len, column)) <= {n}:
            return False
        return all(item.test(list(map(itemgetter(i), column))) for i, item in enumerate(items))

    def check(value: Any) -> Any:
        if not isinstance(value, list) or len(value) != n:
            raise Wrong(f"{what}, not {shown(value)}")
        made, i = [], 0
        try:
            for i, (item, x) in enumerate(zip(items, value, strict=True)):  # noqa: B007
                made.append(item.check(x))
        except Wrong as wrong:
            raise wrong.at(f"[{i}]") from None
        return made

    return Checker(guarded(test), check, what, LIST, any(i.converts for i in items))


def dict_of(key: Checker, item: Checker) -> Checker:
    """A JSON object of any keys (of ``key``'s values) to values of ``item``."""

    def test(column: list) -> bool:
        if not set(map(type, column)) <= OBJECT:
            return False
        return key.test(list(chain.from_iterable(column))) and item.test(list(chain.from_iterable(map(dict.values, column))))

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise Wrong(f"an object, not {shown(value)}")
        made, name = {}, None
        try:
            for name, x in value.items():
                key.check(name)
                made[name] = item.check(x)
        except Wrong as wrong:
            raise wrong.at(at_key(name)) from None
        return made if item.converts else value

    return Checker(guarded(test), check, "an object", OBJECT, item.converts)


def union_of(options: tuple[Checker, ...]) -> Checker:
    """The first option that fits; none: the complaint of the option of the value's JSON type that it went furthest
    in (objects of two forms: the one whose fields it has), or of all."""
    optional = [o for o in options if o is not NONE]
    what = " or ".join(o.what for o in options)

    def test(column: list) -> bool:
        if len(optional) == len(options) - 1 == 1:  # X | None: the common case, a column at a time
            return optional[0].test([v for v in column if v is not None])
        return all(any(o.test([v]) for o in options) for v in column)

    def check(value: Any) -> Any:
        for option in options:
            if option.test([value]):
                return option.check(value) if option.converts else value
        complaints = []
        for option in options:
            if isinstance(value, tuple(option.kinds)):
                try:
                    return option.check(value)
                except Wrong as wrong:
                    complaints.append((_tagged(option, value), len(wrong.path), _at_tag(option, wrong), wrong))
        if complaints:  # the option the value meant to be says what is wrong: the form its tags name, else the one it
            # went furthest in, and of those one whose tag is what is missing (a form told by no tag: the tag is what
            # is wrong, whichever form it meant), else the first
            raise max(complaints, key=lambda complaint: complaint[:3])[3]
        raise Wrong(f"{what}, not {shown(value)}")

    return Checker(guarded(test), check, what, frozenset().union(*(o.kinds for o in options)), any(o.converts for o in options))


def _tagged(option: Checker, value: Any) -> bool:
    """``value`` is an object holding ``option``'s tags (``"fits": true`` for a form declaring ``fits: Literal[True]``)."""
    if not option.tags or not isinstance(value, dict):
        return False
    return all(any(type(v) is type(t) and v == t for t in tag) for n, tag in option.tags for v in [value.get(n, _NO_TAG)])


_NO_TAG = object()


def _at_tag(option: Checker, wrong: Wrong) -> bool:
    """``wrong`` is about one of ``option``'s tags itself (``.fits: missing``), right where the object is."""
    return len(wrong.path) == 1 and any(wrong.path[0] == at_key(name) for name, _ in option.tags)


def ruled(base: Checker, holds: Callable[[Any], bool], what: str, at: Callable[[Any], list[str]] | None = None) -> Checker:
    """``base`` with a rule of its own (``Annotated[T, Check(...)]``): values that ``holds`` is false for are ``what``
    it is not; ``at`` names the field within at fault, where the rule is over several."""

    def test(column: list) -> bool:
        return base.test(column) and all(map(holds, column))

    def check(value: Any) -> Any:
        made = base.check(value)
        try:
            ok = holds(value)
        except Exception:  # noqa: BLE001 -- a rule that cannot read the value: the value is not what it asks for
            ok = False
        if not ok:  # a rule over several fields names the one at fault, not the whole value
            wrong = Wrong(what if at else f"{what}, not {shown(value)}")
            for step in reversed(at(value) if at else []):
                wrong.at(step)
            raise wrong
        return made

    return Checker(guarded(test), check, base.what, base.kinds, base.converts)
