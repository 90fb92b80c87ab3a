"""The form of results.json, declared once, and the one reader that checks a results.json against it.

Every field of the form has a type: the dataclasses of ``results`` (the run, the partition and account rows, the
findings) and, for the sections kept as plain JSON objects, the ``TypedDict``s here (a timeseries row, a load
sample, the workers, the key figures, the read-back, the workload, the open loop's arrivals, a ceiling search, a
simulation, a merge's engines, the range splits) and ``engines.mergeable``'s (an engine's whole count). ``read``
checks a value against its declared type, making the dataclasses on the way; the first field that is wrong is named
in a ``ValueError`` (``results.timeseries[3].requests: missing``), which ``loadtest report`` and ``loadtest merge``
say in one line.

The rules:

- a key a ``TypedDict`` marks ``NotRequired`` came later than its section: results.json written before it lack it,
  and its readers read it with a default (``row.get("rows", 0)``); every other key must be there;
- fields the form does not declare are read past: fields may be added freely (a field added to a section is checked
  once declared in its ``TypedDict``, ``NotRequired`` since results.json written before it lack it);
- a section left at its default (an empty object) is the section's absence (a run without workers, a results.json
  written before the section);
- a number is finite; a whole number is neither a fraction nor true/false; ``Literal`` and ``StrEnum`` types name the
  values allowed; ``Annotated[T, Check(...)]`` adds a rule (a time since the epoch, a histogram's encoding).

Reading is compiled: each declared type becomes a checker, made once, that tests a whole column of values at a time
(a timeseries' ``requests`` of every row in one pass at C speed) and, only when that test fails, walks the values one
by one to name the first wrong field. A timeseries of 100,000 rows is checked in a fraction of the time ``json.loads``
takes to parse it.
"""

# No ``from __future__ import annotations``: the TypedDicts' annotations are the types themselves, read at run time.

import json
import math
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields, is_dataclass
from enum import Enum
from functools import cache
from itertools import chain, repeat
from operator import contains, itemgetter, methodcaller
from types import NoneType, UnionType
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from .buckets import COUNTERS
from .operations import OpClass

__all__ = [
    "Arrivals",
    "Limit",
    "Ceiling",
    "Check",
    "Counts",
    "EngineShare",
    "Epoch",
    "IncompleteStep",
    "Integrity",
    "KeyRange",
    "Keys",
    "Latency",
    "LoadSample",
    "NameCounts",
    "RangeSplit",
    "Retry",
    "RunSettings",
    "Sample",
    "Simulation",
    "TimeseriesRow",
    "USER_SETTINGS",
    "UserClass",
    "Workers",
    "Workload",
    "read",
]


@dataclass(frozen=True)
class Check:
    """A rule beside a type (``Annotated[float, Check(...)]``): ``test`` a value of the type, ``what`` it must be."""

    test: Callable[[Any], bool]
    what: str


#: Seconds since 1970, as ``time.time()`` gives them: a date a ``datetime`` can hold.
Epoch = Annotated[float, Check(lambda t: 0 <= t < 253_402_300_800, "a time in seconds since 1970, before the year 10000")]


# --- the sections kept as JSON objects ------------------------------------------------------------------------------

#: The counters every second of a partition and op class has had since timeseries rows were written; the rest of
#: ``buckets.COUNTERS`` came later (``estimated``, ``backoff_ms``, the open loop's, ``rows``, and any added next).
_FIRST_COUNTERS = ("requests", "failures", "entities", "offered", "attempts", "throttled")

#: One second's counts of one partition and op class (``buckets.Bucket.to_dict``): a timeseries row's, and a bucket
#: of an engine's ``mergeable`` count.
Counts = TypedDict(
    "Counts",
    {
        **{name: int if name in _FIRST_COUNTERS else NotRequired[int] for name in COUNTERS},
        "errors": dict[str, int],  # failed operations by the service's error code
        "longest_ms": NotRequired[int],  # the longest operation ending this second
        "throttled_by": NotRequired[dict[str, int]],  # throttled attempts by reason
    },
)


class TimeseriesRow(Counts):
    """One second of one partition and op class (timeseries.csv's row)."""

    t: int  # seconds from the run's start
    second: int  # the wall clock's
    partition: str
    op_class: OpClass
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    users: int | None  # running that second (none where no sample was taken)


class InFlightSample(TypedDict, total=False):
    """One second of an open loop's operations in flight, every process together."""

    in_flight: int  # the most at once
    cap: int  # allowed at once (--max-in-flight per process)
    capped: int  # slots that waited for a lane
    held_s: float  # time in flight of the operations that finished...
    done: int  # ...and how many


class Sample(TypedDict, total=False):
    """One second's sample: users running, the process's CPU % and each worker's (a merge: each engine's), the run's
    local servers' CPU % (% of one core) and the machine's cores' (% of all), the open loop's operations in flight."""

    users: int
    cpu: float | None
    workers_cpu: dict[str, float]
    servers_cpu: dict[str, float]
    machine_cpu: float
    in_flight: InFlightSample


class LoadSample(Sample):
    t: Required[int]  # seconds from the run's start


class LostWorker(TypedDict):
    worker: str
    lost_at_s: float
    last_report_s: float | None  # none: it never reported
    index: NotRequired[int | None]  # its users' RowKeys carry it


class Workers(TypedDict):
    """A distributed run's workers: those that reported, those lost."""

    reported: list[str]
    lost: list[LostWorker]


class Latency(TypedDict):
    """One op class's percentiles over the run, ms: end to end, the first attempt's, and an open loop's corrected."""

    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    first_attempt_p50_ms: NotRequired[float]
    first_attempt_p99_ms: NotRequired[float]
    corrected_p50_ms: NotRequired[float]
    corrected_p99_ms: NotRequired[float]
    corrected_max_ms: NotRequired[float]


class Keys(TypedDict):
    """How concentrated the load was."""

    distinct: int  # PartitionKeys touched (an HLL estimate)
    tracked: int  # counted exactly
    top: list[str]
    top1_share: float
    top10_share: float
    estimated_entities: int


class KeyRange(TypedDict):
    """One second's entities of untracked keys starting with ``range``."""

    t: int
    range: str
    entities: int


class Retry(TypedDict):
    strategy: str
    backoff_s: float
    attempts_per_operation: float


class Integrity(TypedDict):
    """Acknowledged writes read back after the run."""

    checked: bool
    acknowledged_writes: int
    lost: int
    lost_examples: list[tuple[str, str]]  # (PartitionKey, RowKey)
    unacknowledged: int
    succeeded_earlier: int
    by_lost_workers: NotRequired[int]


class IncompleteStep(TypedDict):
    """A step after the load that failed."""

    step: str
    error: str
    at_s: float


class NameCounts(TypedDict):
    """What one request name did (``request_profile``): an engine's ``mergeable`` counts, and the workload's rows."""

    op: str
    op_class: OpClass
    reach: str
    requests: int
    failures: int
    returned: int
    scanned: int
    estimated: int
    unprojected: int
    after_read: int


class WorkloadName(NameCounts):
    name: str
    density: float | None  # rows returned / rows scanned (GET requests that scanned)


class TaskError(TypedDict):
    error: str
    count: int


class Workload(TypedDict):
    """The checklist's evidence: per request name, and over the run."""

    names: list[WorkloadName]
    single_writes: int
    batchable: int
    ordered: int
    appended: int
    prepended: int
    batchable_per_s: int
    edge_window: int
    task_errors: NotRequired[list[TaskError]]


class Arrivals(TypedDict):
    """An open loop's schedule: the rate asked, and operations offered, sent and served per second."""

    rate: float
    arrivals: str
    offered_per_s: float
    sent_per_s: float
    served_per_s: float
    scheduled: int
    late: int
    dropped: int
    in_flight: NotRequired["InFlight"]


class InFlight(TypedDict):
    """An open loop's operations in flight over the run: the most at once, the bound, the slots that waited for a lane,
    the mean time an operation held its lane, and what the schedule needed (Little's law)."""

    peak: int
    cap: int
    capped: int
    mean_hold_ms: float
    needed: float


class CeilingPlan(TypedDict):
    start: int
    step: int
    maximum: int
    step_s: float
    max_p99_ms: float
    user_rate: int
    steps: int


class StepPartition(TypedDict):
    """A partition's entities/s in a step (and per op class, as further keys)."""

    partition: str
    entities_per_s: float


class CeilingStep(TypedDict):
    step: int
    offered_per_s: int
    users: int
    from_s: float
    to_s: float
    seconds: int
    sent_per_s: float
    served_per_s: float
    served_share: float
    entities_per_s: float
    throttled_share: float
    throttled_by: NotRequired[dict[str, int]]  # throttled attempts by reason: partition, account, timeout
    error_share: float
    errors: dict[str, int]
    dropped: int
    p99_ms: float
    corrected_p99_ms: float
    generator_cpu: float
    servers_cpu: NotRequired[dict[str, float]]  # the run's local servers, % of one core (read since 2026-11-24)
    machine_cpu: NotRequired[float | None]  # the machine's cores, % of all
    capped: NotRequired[int]  # slots that waited for a lane
    partitions: list[StepPartition]
    good: bool
    broken: list[str]


class CeilingOutcome(TypedDict):
    """The last good step."""

    step: int
    offered_per_s: int
    served_per_s: float
    entities_per_s: float
    partitions: list[StepPartition]


#: What can limit a ceiling search ("": no step gave way); ``ceiling.limits.LIMITS`` gives each its remedy.
Limit = Literal["throttling", "errors", "generator", "emulator", "machine", "concurrency", "latency", ""]


class Ceiling(TypedDict):
    """A ceiling search: its plan, each step judged, the ceiling and what limited it."""

    plan: CeilingPlan
    steps: list[CeilingStep]
    ceiling: CeilingOutcome | None  # none: the first step gave way
    found: bool
    limited_by: Limit
    reason: str


class Simulation(TypedDict):
    """``loadtest simulate``: its model and what it leaves out."""

    model: str
    leaves_out: str
    step_s: float
    budgets: dict[str, Any]  # the emulator's budgets (``emulator.budgets.Budgets``)
    keys: int
    operations: int
    elapsed_s: float


class EngineShare(TypedDict):
    """``loadtest merge``: one engine's part of the run, and what its own report said."""

    engine: str
    host: str
    started: str
    duration_s: float
    users: int
    requests: int
    attempts: int
    entities: int
    share: float
    hottest: str
    hottest_peak_eps: float
    hottest_finding: str
    findings: list[str]


class RangeSplit(TypedDict):
    """A range cut in two and both halves moved (seconds from the run's start)."""

    t: float
    key: str
    offline_until_t: float
    low: NotRequired[str]
    high: NotRequired[str]


#: The settings a ``TableUser`` subclass may set as class attributes (``None``: the run's), named as the options'
#: dests: what a class's ``design`` may hold.
USER_SETTINGS = ("partition_key", "key_strategy", "row_key_strategy", "skew", "mix", "batch_size", "batch_mix", "scan_size")


class UserClass(TypedDict):
    """A Locust user class that ran (``user_classes.describe``): its Locust figures, and the design it ran with (a
    table user's settings as the report shows them: its class attributes over the run's, those it set named)."""

    name: str
    weight: int
    fixed_count: int
    users: int
    table_user: bool
    own_tasks: bool
    design: dict[str, Any]
    from_class: list[str]


class RunSettings(TypedDict, total=False):
    """The run's settings as the report shows them; those read as numbers are declared, the rest read past."""

    arrival_rate: float
    emulator_partition_rate: float


# --- the reader -----------------------------------------------------------------------------------------------------


def read(kind: Any, value: Any, where: str) -> Any:
    """``value`` checked against ``kind`` (dataclasses made on the way), else a ``ValueError`` naming the first field
    that is wrong, from ``where`` on: ``results.partitions[3].ratio: a number, not "x"``."""
    checker = _checker(kind)
    try:
        return value if not checker.converts and checker.test([value]) else checker.check(value)
    except _Wrong as wrong:
        raise ValueError(f"{where}{''.join(reversed(wrong.path))}: {wrong.said}") from None


class _Wrong(Exception):
    """What is wrong (``said``) and where, from the value up (``path``, appended on the way out)."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said, self.path = said, []

    def at(self, step: str) -> "_Wrong":
        self.path.append(step)
        return self


class _Absent:
    """A key a row does not have (for the column of an optional one)."""


_ABSENT = _Absent()
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _key(name: Any) -> str:
    return f".{name}" if isinstance(name, str) and _NAME.match(name) else f"[{_shown(name)}]"


def _shown(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class _Checker:
    """One declared type, compiled: ``test`` a whole column of values (True when every one conforms; fast, never
    raises), ``check`` one value (the value, made where the type is a dataclass or an enum, else ``_Wrong``)."""

    test: Callable[[list], bool]
    check: Callable[[Any], Any]
    what: str  # what a value must be, in words
    kinds: frozenset  # the Python types a JSON value of it has (a union asks the option of the value's type)
    converts: bool = False  # ``check`` makes a new value: a container of it must be rebuilt


def _guarded(test: Callable[[list], bool]) -> Callable[[list], bool]:
    def guarded(column: list) -> bool:
        try:
            return test(column)
        except Exception:  # noqa: BLE001 -- a column that breaks the fast test is answered one value at a time
            return False

    return guarded


def _scalar(types: frozenset, what: str, finite: bool = False) -> _Checker:
    """Values of these Python types (a JSON document's own: ``test`` asks for exactly them, ``check`` takes their
    subclasses too, a ``StrEnum`` for a string; ``bool`` is never a number); numbers finite where ``finite``."""
    subclasses = tuple(types)

    def test(column: list) -> bool:
        if not set(map(type, column)) <= types:
            return False
        return not finite or all(map(math.isfinite, column))

    def check(value: Any) -> Any:
        if not isinstance(value, subclasses) or isinstance(value, bool) and bool not in types:
            raise _Wrong(f"{what}, not {_shown(value)}")
        if finite and isinstance(value, float) and not math.isfinite(value):
            raise _Wrong(f"{what}, not {_shown(value)}")
        return value

    return _Checker(_guarded(test), check, what, types)


_INT = _scalar(frozenset({int}), "a whole number")
_FLOAT = _scalar(frozenset({int, float}), "a number", finite=True)
_STR = _scalar(frozenset({str}), "a string")
_BOOL = _scalar(frozenset({bool}), "true or false")
_NONE = _scalar(frozenset({NoneType}), "null")
_ANY = _Checker(lambda column: True, lambda value: value, "anything", frozenset())
_OBJECT, _LIST = frozenset({dict}), frozenset({list})


def _one_of(values: tuple, convert: Callable[[Any], Any] | None = None) -> _Checker:
    allowed, what = frozenset(values), "one of " + ", ".join(str(v) for v in values)
    kinds = frozenset(type(v) for v in values)

    def test(column: list) -> bool:
        return set(map(type, column)) <= kinds and set(column) <= allowed

    def check(value: Any) -> Any:
        if not isinstance(value, tuple(kinds)) or isinstance(value, bool) and bool not in kinds or value not in allowed:
            raise _Wrong(f"{what}, not {_shown(value)}")
        return convert(value) if convert else value

    return _Checker(_guarded(test), check, what, kinds, converts=convert is not None)


def _list(item: _Checker) -> _Checker:
    def test(column: list) -> bool:
        return set(map(type, column)) <= _LIST and item.test(list(chain.from_iterable(column)))

    def check(value: Any) -> Any:
        if not isinstance(value, list):
            raise _Wrong(f"a list, not {_shown(value)}")
        if not item.converts and item.test(value):
            return value
        made, i = [], 0
        try:
            for i, x in enumerate(value):  # noqa: B007 -- i names the item that is wrong
                made.append(item.check(x))
        except _Wrong as wrong:
            raise wrong.at(f"[{i}]") from None
        return made if item.converts else value

    return _Checker(_guarded(test), check, f"a list of {item.what}", _LIST, item.converts)


def _tuple(items: tuple[_Checker, ...]) -> _Checker:
    """A JSON list of ``len(items)`` values, each of its own type."""
    n, what = len(items), f"a list of {len(items)} ({', '.join(i.what for i in items)})"

    def test(column: list) -> bool:
        if not set(map(type, column)) <= _LIST or not set(map(len, column)) <= {n}:
            return False
        return all(item.test(list(map(itemgetter(i), column))) for i, item in enumerate(items))

    def check(value: Any) -> Any:
        if not isinstance(value, list) or len(value) != n:
            raise _Wrong(f"{what}, not {_shown(value)}")
        made, i = [], 0
        try:
            for i, (item, x) in enumerate(zip(items, value, strict=True)):  # noqa: B007
                made.append(item.check(x))
        except _Wrong as wrong:
            raise wrong.at(f"[{i}]") from None
        return made

    return _Checker(_guarded(test), check, what, _LIST, any(i.converts for i in items))


def _dict(key: _Checker, item: _Checker) -> _Checker:
    """A JSON object of any keys (of ``key``'s values) to values of ``item``."""

    def test(column: list) -> bool:
        if not set(map(type, column)) <= _OBJECT:
            return False
        return key.test(list(chain.from_iterable(column))) and item.test(list(chain.from_iterable(map(dict.values, column))))

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Wrong(f"an object, not {_shown(value)}")
        made, name = {}, None
        try:
            for name, x in value.items():
                key.check(name)
                made[name] = item.check(x)
        except _Wrong as wrong:
            raise wrong.at(_key(name)) from None
        return made if item.converts else value

    return _Checker(_guarded(test), check, "an object", _OBJECT, item.converts)


def _typed_dict(kind: type) -> _Checker:
    """A JSON object with the declared keys (the ``NotRequired`` ones where present), each of its type; others are
    read past. The object itself is kept (its values are checked, not made)."""
    hints, required = get_type_hints(kind, include_extras=True), kind.__required_keys__
    declared = [(name, name in required, _checker(_unwrapped(hint))) for name, hint in hints.items()]

    groups: dict[_Checker, list[str]] = {}  # keys of one type together: one pass over the column for each type
    for name, _, checker in declared:
        groups.setdefault(checker, []).append(name)
    together = [(checker, itemgetter(*names), len(names) > 1) for checker, names in groups.items()]

    def test(column: list) -> bool:
        if not set(map(type, column)) <= _OBJECT:
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
            raise _Wrong(f"an object, not {_shown(value)}")
        for name, needed, checker in declared:
            if name not in value:
                if needed:
                    raise _Wrong("missing").at(_key(name))
                continue
            try:
                checker.check(value[name])
            except _Wrong as wrong:
                raise wrong.at(_key(name)) from None
        return value

    return _Checker(_guarded(test), check, "an object", _OBJECT)


def _dataclass(kind: type) -> _Checker:
    """A JSON object made into the dataclass ``kind``: its fields without a default must be there; a field left at its
    default (an empty object) stays at it."""
    hints = get_type_hints(kind, include_extras=True)
    declared = []
    for f in fields(kind):
        needed = f.default is MISSING and f.default_factory is MISSING
        empty = f.default_factory() if f.default_factory in (dict, list) else MISSING
        declared.append((f.name, needed, empty, _checker(hints[f.name])))

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Wrong(f"an object, not {_shown(value)}")
        made = {}
        for name, needed, empty, checker in declared:
            if name not in value:
                if needed:
                    raise _Wrong("missing").at(_key(name))
                continue
            x = value[name]
            if type(x) is type(empty) and not x:  # the section's absence
                made[name] = x
                continue
            try:
                made[name] = x if not checker.converts and checker.test([x]) else checker.check(x)
            except _Wrong as wrong:
                raise wrong.at(_key(name)) from None
        return kind(**made)

    def test(column: list) -> bool:
        return False  # always made, by ``check``

    return _Checker(test, check, "an object", _OBJECT, converts=True)


def _union(options: tuple[_Checker, ...]) -> _Checker:
    """The first option that fits; none: the complaint of the first option of the value's JSON type, or of all."""
    optional = [o for o in options if o is not _NONE]
    what = " or ".join(o.what for o in options)

    def test(column: list) -> bool:
        if len(optional) == len(options) - 1 == 1:  # X | None: the common case, a column at a time
            return optional[0].test([v for v in column if v is not None])
        return all(any(o.test([v]) for o in options) for v in column)

    def check(value: Any) -> Any:
        for option in options:
            if option.test([value]):
                return option.check(value) if option.converts else value
        for option in options:
            if isinstance(value, tuple(option.kinds)):
                return option.check(value)  # raises: the option the value meant to be says what is wrong
        raise _Wrong(f"{what}, not {_shown(value)}")

    return _Checker(_guarded(test), check, what, frozenset().union(*(o.kinds for o in options)), any(o.converts for o in options))


def _ruled(base: _Checker, rule: Check) -> _Checker:
    def test(column: list) -> bool:
        return base.test(column) and all(map(rule.test, column))

    def check(value: Any) -> Any:
        made = base.check(value)
        try:
            ok = rule.test(value)
        except Exception:  # noqa: BLE001 -- a rule that cannot read the value: the value is not what it asks for
            ok = False
        if not ok:
            raise _Wrong(f"{rule.what}, not {_shown(value)}")
        return made

    return _Checker(_guarded(test), check, base.what, base.kinds, base.converts)


def _unwrapped(hint: Any) -> Any:
    """A TypedDict key's type without its ``Required`` / ``NotRequired`` (the dict says which keys are required)."""
    while get_origin(hint) in (Required, NotRequired):
        hint = get_args(hint)[0]
    return hint


@cache
def _checker(kind: Any) -> _Checker:
    """The checker of a declared type, made once."""
    origin, args = get_origin(kind), get_args(kind)
    if kind is Any:
        return _ANY
    if kind in (int, float, str, bool, NoneType, None):
        return {int: _INT, float: _FLOAT, str: _STR, bool: _BOOL}.get(kind, _NONE)
    if origin is Annotated:
        checker = _checker(args[0])
        for rule in (a for a in kind.__metadata__ if isinstance(a, Check)):
            checker = _ruled(checker, rule)
        return checker
    if origin in (Union, UnionType):
        return _union(tuple(_checker(a) for a in args))
    if origin is Literal:
        return _one_of(args)
    if isinstance(kind, type) and issubclass(kind, Enum):
        return _one_of(tuple(m.value for m in kind), kind)
    if is_typeddict(kind):
        return _typed_dict(kind)
    if isinstance(kind, type) and is_dataclass(kind):
        return _dataclass(kind)
    if origin is list or kind is list:
        return _list(_checker(args[0]) if args else _ANY)
    if origin is tuple:
        return _tuple(tuple(_checker(a) for a in args))
    if origin is dict or kind is dict:
        return _dict(_checker(args[0]) if args else _ANY, _checker(args[1]) if args else _ANY)
    raise TypeError(f"results_schema cannot check {kind!r}")  # a type the form should not declare
