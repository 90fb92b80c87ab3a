"""The form of results.json's per-second rows: one second of a partition and op class (a timeseries row, and a
bucket of an engine's ``mergeable`` count), one second's load sample, one second of an untracked key range.
``results_schema`` declares the rest of the form; ``typed_reader`` reads them all.
"""

# No ``from __future__ import annotations``: the TypedDicts' annotations are the types themselves, read at run time.

from typing import NotRequired, Required, TypedDict

from .buckets import COUNTERS
from .operations import OpClass

__all__ = ["Counts", "KeyRange", "LoadSample", "Sample", "TimeseriesRow"]


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


class KeyRange(TypedDict):
    """One second's entities of untracked keys starting with ``range``."""

    t: int
    range: str
    entities: int
