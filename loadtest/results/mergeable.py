"""An engine's whole count, as ``loadtest merge`` adds it: what results.json carries beside the figures.

The metrics' snapshot (the per-second buckets by wall-clock second, partition and op class, in buckets.parquet beside
results.json, which names it; the HDR latency histograms in HdrHistogram's own encoding, per second and, for the
seconds rolled up, per minute; the key sketches in DataSketches' own serialization; the run's clock), the request
profile's counts, the per-second samples and who counted them. The integrity ledger's counts, the settings and the
run's identity are in the results already.

``capture`` makes it (its buckets a frame, which ``Results.write`` puts in their file); ``Mergeable`` is its form,
which ``Results.from_dict`` checks on read like every section (``schema``): the sketches decoded there, the
histograms' headers read (their counts are decoded once, as the merge adds them, and named if they do not decode). A
count of another version is read past: ``merge`` refuses it, naming its version.
"""

# No ``from __future__ import annotations``: the TypedDicts' annotations are the types themselves, read at run time
# (which keys are ``NotRequired``).
import base64
import socket
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypedDict

from ..outputs import BUCKETS_FILE
from ..service.operations import OpClass
from ..typed.column_checkers import at_key
from ..typed.reader import Check
from .schema import Epoch, NameCounts
from .series_schema import LATE_S, MAX_SPAN_S, Counts, Sample

if TYPE_CHECKING:
    import pandas as pd

    from ..counting.bucket_frame import Chunks
    from ..counting.counts import RunCounts
    from ..counting.request_evidence import RequestProfile

__all__ = ["BucketsFile", "MERGEABLE_VERSION", "Mergeable", "SampleColumns", "capture", "sample_columns"]

MERGEABLE_VERSION = 1


def _histogram(encoded: str) -> bool:
    """Whether ``encoded`` is an HDR histogram that the metrics' own (1 µs to an hour) can add: its header (the counts
    are decoded once, as they are added; counts that do not decode are named there)."""
    from ..counting.histograms import check_header  # the counts' libraries load only when an engine's count is read

    check_header(encoded)
    return True


def _frequent_items(encoded: str) -> bool:
    import datasketches as ds

    ds.frequent_strings_sketch.deserialize(base64.b64decode(encoded))
    return True


def _hll(encoded: str) -> bool:
    import datasketches as ds

    ds.hll_sketch.deserialize(base64.b64decode(encoded))
    return True


Histogram = Annotated[str, Check(_histogram, "an HDR histogram of microseconds up to an hour, in HdrHistogram's encoding")]


class Clock(TypedDict):
    started: Epoch
    steady_from: Epoch | None  # none: the users never all ran
    stopped: Epoch


#: An engine's clock as the merge reads it: its seconds become arrays a second long (``engines.bucket_sum``).
SpannedClock = Annotated[
    Clock,
    Check(
        lambda clock: 0 <= clock["stopped"] - clock["started"] <= MAX_SPAN_S,
        f"a clock that stops 0 to {MAX_SPAN_S:,} s after it starts (the most the tool reads of one run)",
    ),
]


class BucketsFile(TypedDict):
    """Where an engine's buckets are: a file beside results.json (``bucket_frame``'s columns), and its rows."""

    file: Literal[BUCKETS_FILE]
    rows: int


class EdgeSnapshot(TypedDict):
    """One end of the key order as ``KeyEdges.snapshot`` writes it: each second its range had load, with its figures."""

    moves: Annotated[int, Check(lambda n: n >= 0, "a whole number of 0 or more")]
    puts: Annotated[int, Check(lambda n: n >= 0, "a whole number of 0 or more")]
    key: str | None
    landed: NotRequired[tuple[str, str] | None]  # the first and the last key that landed past the end
    seconds: list[int]
    asked: list[float]
    served: list[float]
    throttled: list[float]


class EdgesSnapshot(TypedDict):
    puts: Annotated[int, Check(lambda n: n >= 0, "a whole number of 0 or more")]
    append: EdgeSnapshot
    prepend: EdgeSnapshot


class FoldedTotalsSnapshot(TypedDict):
    """``counting.folded_totals``: each key's counts of the seconds it was not kept apart, for a merge to make whole."""

    rows: list[tuple[str, OpClass, Counts]]  # (partition, op class, its folded seconds' counts summed)
    kept_when_full: list[list[str]]  # each count that folded more keys than it hands over: the keys it kept or listed


class MetricsSnapshot(TypedDict):
    """``RunCounts.snapshot``: what the metrics' ``merge`` adds."""

    #: in their file beside results.json; before that file, in results.json: (wall-clock second, partition, op class,
    #: its counts)
    buckets: BucketsFile | list[tuple[int, str, OpClass, Counts]]
    latency: list[tuple[int, OpClass, Histogram]]  # (second, op class, histogram)
    latency_minutes: NotRequired[list[tuple[int, OpClass, Histogram]]]  # (a minute's first second, ...): aged ones
    first_attempt: list[tuple[OpClass, Histogram]]
    corrected: list[tuple[int, OpClass, Histogram]]
    corrected_minutes: NotRequired[list[tuple[int, OpClass, Histogram]]]
    heavy: Annotated[str, Check(_frequent_items, "a frequent-items sketch of strings (DataSketches), in base64")]
    distinct: Annotated[str, Check(_hll, "an HLL sketch (DataSketches), in base64")]
    ranges: list[tuple[int, str, int]]  # (second, first key character, entities folded)
    edges: NotRequired[EdgesSnapshot]  # the ends of the key order (``counting.key_edges``)
    hot: NotRequired[list[str]]  # keys hot in some second, counted exactly
    folded: NotRequired[list[str]]  # written before folded_totals: keys some of whose seconds folded, counts unknown
    folded_totals: NotRequired[FoldedTotalsSnapshot]  # each key's folded counts
    clock: SpannedClock


def _out_of_clock(metrics: MetricsSnapshot) -> list[int]:
    """The key ranges whose second lies outside the clock by more than ``LATE_S`` (the merged run's key ranges are
    per-second arrays from its start)."""
    clock = metrics["clock"]
    low, high = clock["started"] - LATE_S, clock["stopped"] + LATE_S
    return [i for i, (second, _, _) in enumerate(metrics["ranges"]) if not low <= second <= high]


#: An engine's metrics as the merge reads them.
Counted = Annotated[
    MetricsSnapshot,
    Check(
        lambda metrics: not _out_of_clock(metrics),
        f"a second within {LATE_S} s of the clock's start and stop (metrics.clock)",
        lambda metrics: [".ranges", f"[{_out_of_clock(metrics)[0]}]", "[0]"],
    ),
]


#: The samples' figures kept as one column each, and those kept as columns by name (a process's CPU, an in-flight figure).
_FIGURES, _NAMED = ("users", "cpu", "machine_cpu"), ("in_flight", "workers_cpu", "servers_cpu")


class SampleColumns(TypedDict):
    """The per-second samples as columns (an hour's sample dicts were half an engine's results.json and most of what
    ``loadtest merge`` spent reading it): a value for each of ``second`` in each column, null where that second had
    none; a named figure's column under its name (the in-flight figures, each process's CPU %)."""

    second: list[int]
    users: list[int]
    cpu: list[float | None]
    machine_cpu: list[float | None]
    in_flight: dict[str, list[float | None]]
    workers_cpu: dict[str, list[float | None]]
    servers_cpu: dict[str, list[float | None]]


def _lengths(columns: SampleColumns) -> dict[tuple[str, ...], int]:
    """Each column's length, by its steps from the samples (``(".cpu",)``, ``(".in_flight", ".scheduled")``)."""
    lengths = {(at_key(name),): len(columns[name]) for name in ("second", *_FIGURES)}
    for group in _NAMED:
        lengths |= {(at_key(group), at_key(name)): len(column) for name, column in columns[group].items()}
    return lengths


def _one_length(columns: SampleColumns) -> bool:
    return len(set(_lengths(columns).values())) == 1


def _uneven(columns: SampleColumns) -> list[str]:
    """The steps to the first column whose length is not most columns' (the one a cut or an addition changed)."""
    lengths = _lengths(columns)
    usual = Counter(lengths.values()).most_common(1)[0][0]
    return list(next(steps for steps, n in lengths.items() if n != usual))


def sample_columns(samples: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """Per-second samples (second -> sample) as ``SampleColumns``, seconds in order."""
    seconds = sorted(samples)
    rows = [samples[second] for second in seconds]
    columns: dict[str, Any] = {"second": seconds, "users": [row.get("users") or 0 for row in rows]}
    columns |= {name: [row.get(name) for row in rows] for name in _FIGURES[1:]}
    for group in _NAMED:
        names = dict.fromkeys(name for row in rows for name in row.get(group) or {})
        columns[group] = {name: [(row.get(group) or {}).get(name) for row in rows] for name in names}
    return columns


class ProfileSnapshot(TypedDict):
    """``RequestProfile.snapshot``: what the request profile's ``merge`` adds."""

    names: dict[str, NameCounts]
    totals: dict[str, int]
    task_errors: dict[str, int]


class Mergeable(TypedDict):
    """An engine's whole count (``capture``)."""

    version: Literal[1]  # MERGEABLE_VERSION
    run_id: str
    engine: str
    host: str
    metrics: Counted
    workload: ProfileSnapshot
    #: as columns; before them, (wall-clock second, its sample) pairs
    samples: (
        Annotated[SampleColumns, Check(_one_length, "columns of one length, a value a second", _uneven)]
        | list[tuple[int, Sample]]
    )


class OtherVersion(TypedDict):
    """A count of another version: read past (``merge`` refuses it, naming the version)."""

    version: Annotated[int, Check(lambda version: version != MERGEABLE_VERSION, "a version of its own")]


def capture(
    metrics: "RunCounts",
    workload: "RequestProfile",
    samples: Mapping[int, Mapping[str, Any]],
    *,
    run_id: str,
    engine: str,
    buckets: "pd.DataFrame | Chunks | None" = None,
) -> dict[str, Any]:
    """This engine's counts at the end of its test, nothing reset; its buckets a frame (``bucket_frame``; ``buckets``:
    ``RunCounts.frame()``, where the caller has made it already), which results.json names by its file
    (``Results.write`` writes both)."""
    return {
        "version": MERGEABLE_VERSION,
        "run_id": run_id,
        "engine": engine,
        "host": socket.gethostname(),
        "metrics": {**metrics.snapshot(buckets=False), "buckets": metrics.frame() if buckets is None else buckets},
        "workload": workload.snapshot(),
        "samples": sample_columns(samples),
    }
