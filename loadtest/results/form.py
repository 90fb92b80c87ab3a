"""The run's result: one interchange form that every output renders from.

``summary.build`` makes it from what the metrics counted; ``write``/``load_file`` round-trip it
(results.json, and the per-second series beside it in series.parquet: ``series_frame``), so
``loadtest report`` re-renders without re-running. The verdict fills in findings; the report
only reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..counting import bucket_frame
from ..counting.buckets import GROUPS
from ..counting.phases import PEAK_WINDOW_S
from ..outputs import BUCKETS_FILE, RESULTS_FILE, SERIES_FILE, strict_json, write_text
from ..service.operations import OpClass
from ..typed.reader import loads, read
from . import series_frame
from .advice_schema import Advice
from .ceiling_schema import Ceiling
from .finding_names import FindingKind
from .mergeable import Mergeable, OtherVersion
from .rows import AccountRow, Finding, PartitionRow, RunInfo
from .schema import (
    Arrivals,
    EngineShare,
    IncompleteStep,
    Integrity,
    KeyOrder,
    Keys,
    Latency,
    Logs,
    RangeSplit,
    Retry,
    SeriesFiles,
    Simulation,
    Workers,
    Workload,
)
from .series_schema import KeyRange, LoadSample, TimeseriesRow
from .wall_clock import RunClock

__all__ = [
    "AccountRow",
    "Finding",
    "FindingKind",
    "PEAK_WINDOW_S",
    "PartitionRow",
    "Results",
    "RunInfo",
    "SCHEMA_VERSION",
    "SeriesMissing",
]

SCHEMA_VERSION = 1
#: A field kept in a file beside results.json, not in it (``typed.reader`` reads past it), and the form results.json
#: held it in before that file (``Results.from_dict`` still reads it).
BESIDE = {"beside": SERIES_FILE, "older": list[TimeseriesRow]}


#: A step after the load as ``wrapup.finish`` runs it: its name and action; True if it was done, False if it failed
#: (and was recorded as INCOMPLETE).
Attempt = Callable[[str, Callable[[], object]], bool]


def _unguarded(step: str, action: Callable[[], object]) -> bool:
    """An ``Attempt`` that lets a failure raise (a results written outside ``wrapup``: a test, a tool's own)."""
    action()
    return True


def _raise(error: Exception) -> None:
    raise error


class SeriesMissing(ValueError):
    """A results.json names its series file, and the file is not beside it, or is not the series."""


def _fields(value: Any) -> dict[str, Any]:
    """A dataclass's fields for ``json``, which walks them itself (no copy); the series and an engine's buckets go in
    their own files, and results.json says where and how many rows each has."""
    if isinstance(value, pd.DataFrame | bucket_frame.Chunks):  # the one frame inside a section: an engine's buckets
        return {"file": BUCKETS_FILE, "rows": len(value)}
    if isinstance(value, _SeriesInline):  # its file could not be written: its rows in results.json, the older form
        beside = {k: v for k, v in _fields(value.results).items() if k != "series"}
        return {**beside, "timeseries": series_frame.records(value.results.timeseries)}
    if isinstance(value, Results):
        return {
            **{f.name: getattr(value, f.name) for f in fields(value) if not f.metadata.get("beside")},
            "series": {"file": SERIES_FILE, "rows": len(value.timeseries), "csv": value.csv_file},
        }
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    raise TypeError(f"{type(value).__name__} is not part of the results form")


@dataclass(frozen=True)
class _SeriesInline:
    """Results written with the series' rows inside results.json (``Results.to_json(series_inline=True)``)."""

    results: Results


class NotANumber(ValueError):
    """Figures that were not numbers (NaN, ±Infinity), written as null: strict JSON has no such value."""


@dataclass(kw_only=True)
class Results:
    run: RunInfo
    partitions: list[PartitionRow]
    account: AccountRow
    findings: list[Finding] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    #: per second, partition and op class: counts, latency, users (``series_frame``: series.parquet beside results.json)
    timeseries: pd.DataFrame = field(default_factory=series_frame.empty, metadata=BESIDE)
    # the sections kept as JSON objects, of the form results_schema, series_schema and ceiling_schema declare (left
    # empty: not in this run)
    load: list[LoadSample] = field(default_factory=list)  # per second: users, generator cpu %
    workers: Workers = field(default_factory=dict)  # distributed runs: reported and lost workers
    latency: dict[OpClass, Latency] = field(default_factory=dict)  # per op class: p50/p95/p99/max ms
    keys: Keys = field(default_factory=dict)  # distinct keys, tracked keys, top-1/top-10 shares
    key_ranges: list[KeyRange] = field(default_factory=list)  # per second: entities of untracked keys by range
    key_order: KeyOrder = field(default_factory=dict)  # the ranges at both ends of the key order, each as one partition
    retry: Retry = field(default_factory=dict)  # strategy, attempts per operation, time spent backing off
    integrity: Integrity = field(default_factory=dict)  # acknowledged writes read back: lost, unacknowledged
    incomplete: list[IncompleteStep] = field(default_factory=list)  # steps after the load that failed: step, error, at_s
    workload: Workload = field(default_factory=dict)  # per request name and over the run: the checklist's evidence
    arrivals: Arrivals = field(default_factory=dict)  # open loop: rate asked, offered / sent / served per s, dropped
    ceiling: Ceiling = field(default_factory=dict)  # a ceiling search: plan, steps, ceiling, what limited it
    simulation: Simulation = field(default_factory=dict)  # loadtest simulate: its model, what it leaves out, splits
    engines: list[EngineShare] = field(default_factory=list)  # loadtest merge: each engine's share of the run
    logs: Logs = field(default_factory=dict)  # loadtest traffic: the records read and what they could not tell
    advice: Advice = field(default_factory=dict)  # loadtest advise: the designs searched, their costs, the choice
    #: the partition layer's range splits (the emulator's, a simulation's): t, key, low, high, offline_until_t (run s)
    range_splits: list[RangeSplit] = field(default_factory=list)
    schema: int = SCHEMA_VERSION
    #: an engine's whole count, as loadtest merge adds it (last: big); another version's is read past
    mergeable: Mergeable | OtherVersion = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.timeseries, pd.DataFrame):  # rows, as results.json held them before series.parquet
            self.timeseries = series_frame.of_rows(self.timeseries)

    # --- the interchange form -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The results as plain objects: the series as its rows, an engine's buckets listed (the form results.json held
        both in before their files)."""
        data = {**asdict(self), "timeseries": series_frame.records(self.timeseries)}
        metrics = data["mergeable"].get("metrics", {})
        if isinstance(metrics.get("buckets"), bucket_frame.Chunks):
            metrics["buckets"] = pd.concat(list(metrics["buckets"].frames()), ignore_index=True)
        if isinstance(metrics.get("buckets"), pd.DataFrame):
            metrics["buckets"] = [[*key, b.to_dict()] for key, b in bucket_frame.to_buckets(metrics["buckets"]).items()]
        return data

    def to_json(self, *, series_inline: bool = False) -> str:
        """results.json's text: the sections read where they lie (``asdict``'s deep copy of every row took most of a
        long run's writing time); the series is not in it, only its file's name and rows (``write`` writes both), or,
        ``series_inline``, its rows (its file could not be written). Strict JSON (``outputs.strict_json``)."""
        return self._json(series_inline)[0]

    def _json(self, series_inline: bool) -> tuple[str, list[str]]:
        """results.json's text, and each figure in it that was not a number (written as null)."""
        return strict_json(_SeriesInline(self) if series_inline else self, root="results", default=_fields)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Results:
        """The results a results.json holds, every field of the form checked against its declared type, every section
        too (``typed.reader``): a ``ValueError`` names the first that is wrong (``results.partitions[3].ratio: a
        number, not "x"``). Fields the form does not declare are read past. The series is in its own file
        (``load_file`` reads it); a results.json written before that file holds its rows, checked as they are read
        (``results.timeseries[3].requests: missing``)."""
        results = read(cls, data, "results")
        if "series" in data:
            read(SeriesFiles, data["series"], "results.series")
        if data.get("timeseries"):
            results.timeseries = series_frame.of_rows(read(BESIDE["older"], data["timeseries"], "results.timeseries"))
            try:
                series_frame.check_span(results.timeseries)
            except ValueError as err:
                raise ValueError(f"results.timeseries: {err}") from None
        return results

    @classmethod
    def from_json(cls, text: str) -> Results:
        return cls.from_dict(loads(text))

    @classmethod
    def load_file(cls, path: Path) -> Results:
        """A results.json and the series beside it: a ``ValueError`` names the first field that is wrong, a
        ``SeriesMissing`` the series' file when results.json names one that is not there (copied alone) or unreadable."""
        path = Path(path)
        data = loads(path.read_text(encoding="utf-8"))
        results = cls.from_dict(data)
        series = data.get("series", {})  # checked: its file's name and rows
        if series.get("rows"):
            beside = path.parent / SERIES_FILE
            if not beside.is_file():
                raise SeriesMissing(f"its per-second series ({SERIES_FILE}, {series['rows']:,} rows) is not beside it")
            try:
                results.timeseries = series_frame.read(beside)
            except ValueError as err:
                raise SeriesMissing(str(err)) from None
        return results

    def write(self, out: Path, attempt: Attempt = _unguarded) -> bool:
        """results.json, series.parquet and timeseries.csv (one row per second x partition x op class), and an engine's
        buckets.parquet, each written whole; results.json last, so that it never stands without the files it names.
        Each file beside it is a step of its own (``attempt``: its name and action, True if done; by default a failure
        raises): one that fails costs only itself, and the series' rows then go inside results.json. True if they did
        (a later ``write_json`` passes it as ``series_inline``)."""
        series = attempt(SERIES_FILE, lambda: series_frame.write(self.timeseries, out / SERIES_FILE))
        buckets = self.mergeable.get("metrics", {}).get("buckets")
        if isinstance(buckets, pd.DataFrame | bucket_frame.Chunks):
            attempt(BUCKETS_FILE, lambda: bucket_frame.write(buckets, out / BUCKETS_FILE))
        elif not isinstance(buckets, dict):  # no buckets of its own: none of an earlier run's left beside it
            attempt(BUCKETS_FILE, lambda: bucket_frame.write(None, out / BUCKETS_FILE))
        attempt(self.csv_file, lambda: series_frame.write_csv(self.timeseries, out))
        if series:
            self.write_json(out, attempt)
            return False
        if attempt(f"the series' rows in {RESULTS_FILE}", lambda: self.write_json(out, attempt, series_inline=True)):
            return True
        self.write_json(out, attempt)  # without its rows: the series is lost, and said so
        return False

    def write_json(self, out: Path, attempt: Attempt = _unguarded, *, series_inline: bool = False) -> None:
        """results.json alone, whole (strict JSON; a figure that was not a number is null, and ``attempt`` is told
        which under the step "results.json's figures"). An ``OSError`` (a full disk, a folder gone) is raised."""
        text, nulled = self._json(series_inline)
        if nulled:
            error = NotANumber(f"{len(nulled)} figure(s) not a number, written as null: {', '.join(nulled[:3])}")
            attempt(f"{RESULTS_FILE}'s figures", lambda: _raise(error))
        write_text(out / RESULTS_FILE, text)

    def let_go_of_buckets(self) -> None:
        """Once ``write`` has put an engine's buckets in their file, hold only what results.json says of them (the
        file's name and rows; a later ``write`` leaves the file as it is): the report and the steps after never read
        them, and ten minutes over 50 keys are 14 MB."""
        metrics = self.mergeable.get("metrics", {})
        if isinstance(metrics.get("buckets"), pd.DataFrame | bucket_frame.Chunks):
            metrics["buckets"] = _fields(metrics["buckets"])

    # --- questions the verdict, the report and compare ask -----------------------------------

    @property
    def clock(self) -> RunClock:
        """The run's seconds as findings say them: since its start, and in UTC beside them for a long run."""
        return RunClock.of(self.timeseries, self.run.duration_s)

    @property
    def csv_file(self) -> str:
        """The series' spreadsheet copy beside results.json: timeseries.csv, gzipped past a spreadsheet's ease."""
        return series_frame.csv_name(len(self.timeseries))

    @property
    def open_loop(self) -> bool:
        """Demand was set by a schedule (``--arrival-rate``, or a simulation), not by the service's pace."""
        return bool(self.arrivals) or self.run.simulated

    def rows(self, op_class: OpClass | None = None) -> list[PartitionRow]:
        return [r for r in self.partitions if op_class is None or r.op_class == op_class]

    def peaks(self) -> dict[str, float]:
        """Each tracked partition's peak against its target: its busiest figure, GET and PUT together where it had both
        (in an open loop, the demand's)."""
        peaks: dict[str, float] = {}
        for row in self.partitions:
            if row.partition not in GROUPS:
                peaks[row.partition] = max(peaks.get(row.partition, 0.0), row.judged(self.open_loop)[0])
        return peaks

    def hottest(self, n: int = 1) -> list[str]:
        """The ``n`` hottest partitions, hottest first: the one definition of "hottest"."""
        peaks = self.peaks()
        return sorted(peaks, key=lambda p: (-peaks[p], p))[:n]

    def hottest_rows(self, n: int = 10) -> list[PartitionRow]:
        """The ``n`` hottest partitions' rows (GET, PUT, ALL), then the groups' (the other partitions, the unattributed)."""
        rank = {p: i for i, p in enumerate(self.hottest(n))}
        order = {OpClass.GET: 0, OpClass.PUT: 1, OpClass.ALL: 2}
        rows = sorted(
            (r for r in self.partitions if r.partition in rank), key=lambda r: (rank[r.partition], order.get(r.op_class, 3))
        )
        return rows + [r for r in self.partitions if r.partition in GROUPS]

    def headline(self, partition: str) -> PartitionRow:
        """The row a partition's target applies to: ALL where it had GET and PUT, else its one op class."""
        rows = [r for r in self.partitions if r.partition == partition]
        return next((r for r in rows if r.op_class == OpClass.ALL), max(rows, key=lambda r: r.judged(self.open_loop)[0]))
