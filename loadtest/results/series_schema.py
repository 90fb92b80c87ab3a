"""The form of results.json's per-second rows: one second of a partition and op class (a timeseries row, and a
bucket of an engine's ``mergeable`` count), one second's load sample, one second of an untracked key range.
``schema`` declares the rest of the form; ``typed.reader`` reads them all.
"""

# No ``from __future__ import annotations``: the TypedDicts' annotations are the types themselves, read at run time.

from typing import Annotated, NotRequired, Required, TypedDict

from ..counting.buckets import COUNTERS
from ..limits import MAX_DURATION_S
from ..service.operations import OpClass
from ..typed.reader import Check

__all__ = ["LATE_S", "MAX_BIN_S", "MAX_SPAN_S", "Counts", "KeyRange", "LoadSample", "RunSecond", "Sample", "TimeseriesRow"]

#: The most seconds the tool reads a run's per-second figures over (a series from second 0 to its last, an engine's
#: clock, engines' clocks together): the longest run (``MAX_DURATION_S``, a week) and a day beside it (engines started
#: apart, a late stop). Each figure is an array a second long, so a small file that said more would ask for gigabytes
#: (a week of one key's series took the report 0.8 GB: a year would take some 40).
MAX_SPAN_S = MAX_DURATION_S + 86_400
#: The most seconds a row holds: an hour (``rolled_frame``'s widest bin, a span past a week).
MAX_BIN_S = 3_600
#: Seconds an engine's count may lie before its clock's start or after its stop (a report counted late); one further
#: out is not of its run.
LATE_S = 60
_WITHIN = Check(lambda t: -MAX_SPAN_S <= t <= MAX_SPAN_S, f"a second of the run, within {MAX_SPAN_S:,} s of its start")
#: A second of the run, from its start (a row's, a worker lost, a step that failed): an index of its per-second arrays.
RunSecond = Annotated[float, _WITHIN]
_Second = Annotated[int, _WITHIN]


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

    t: _Second  # seconds from the run's start
    second: int  # the wall clock's
    partition: str
    op_class: OpClass
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    users: int | None  # running that second (none where no sample was taken)
    bin_s: NotRequired[Annotated[int, Check(lambda n: 1 <= n <= MAX_BIN_S, f"1 to {MAX_BIN_S:,} seconds")]]  # held


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
    t: Required[_Second]  # seconds from the run's start


class KeyRange(TypedDict):
    """One second's entities of untracked keys starting with ``range``."""

    t: _Second
    range: str
    entities: int
