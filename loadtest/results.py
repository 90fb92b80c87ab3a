"""The run's result: one interchange form that every output renders from.

``Results.build`` turns the metrics listener's per-second buckets into per-partition
figures (mean entities/s over the steady phase, peak of a 10-second moving average);
``to_json``/``from_json`` round-trip it, so ``loadtest report`` re-renders without
re-running. The verdict fills in findings; the report only reads.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from .metrics import COMPACT_AFTER_S, OTHER, Bucket, PartitionMetrics, new_histogram

__all__ = ["AccountRow", "Finding", "PartitionRow", "Results", "RunInfo", "moving_average_peak", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
PEAK_WINDOW_S = 10
TIMESERIES_FIELDS = (
    "t", "second", "partition", "op_class", "requests", "failures", "entities", "offered", "estimated", "attempts",
    "throttled", "backoff_ms", "errors", "p50_ms", "p95_ms", "p99_ms", "max_ms", "users",
)  # fmt: skip


@dataclass(kw_only=True)
class RunInfo:
    id: str
    started: str
    duration_s: float
    target_kind: str
    table: str
    seeded: int
    partition_target: int
    account_target: int
    profile: str
    endpoint: str = ""
    emulator: bool = False
    steady_from_s: float = 0.0
    steady_seconds: int = 0
    peak_window_s: int = PEAK_WINDOW_S
    users: int = 0
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class AccountRow:
    """Entities served against a target: the account's row, and the base of each partition's."""

    entities: int
    mean_eps: float
    peak_eps: float
    target: int
    ratio: float
    finding: str = ""


@dataclass(kw_only=True)
class PartitionRow(AccountRow):
    partition: str
    op_class: str  # GET | PUT | ALL (both, the figure the partition's target applies to)
    requests: int
    offered: int = 0
    estimated: int = 0  # entities counted from what the run knows of the partition (filtered scans)
    failures: int = 0
    attempts: int = 0
    throttled: int = 0


@dataclass(kw_only=True)
class Finding:
    kind: str
    partition: str | None
    op_class: str | None
    message: str
    remedy: str


def moving_average_peak(series: list[float], window: int = PEAK_WINDOW_S) -> float:
    """The highest mean over ``window`` consecutive seconds (the whole series if shorter)."""
    if not series:
        return 0.0
    window = min(window, len(series))
    total = best = sum(series[:window])
    for i in range(window, len(series)):
        total += series[i] - series[i - window]
        best = max(best, total)
    return best / window


def _pct(hist: Any, p: float) -> float:
    return round(hist.get_value_at_percentile(p) / 1000.0, 2) if hist.get_total_count() else 0.0


@dataclass(kw_only=True)
class Results:
    run: RunInfo
    partitions: list[PartitionRow]
    account: AccountRow
    findings: list[Finding] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    timeseries: list[dict[str, Any]] = field(default_factory=list)
    load: list[dict[str, Any]] = field(default_factory=list)  # per second: users, generator cpu %
    workers: dict[str, Any] = field(default_factory=dict)  # distributed runs: reported and lost workers
    latency: dict[str, dict[str, float]] = field(default_factory=dict)  # per op class: p50/p95/p99/max ms
    keys: dict[str, Any] = field(default_factory=dict)  # distinct keys, tracked keys, top-1/top-10 shares
    key_ranges: list[dict[str, Any]] = field(default_factory=list)  # per second: entities of untracked keys by range
    retry: dict[str, Any] = field(default_factory=dict)  # strategy, attempts per operation, time spent backing off
    integrity: dict[str, Any] = field(default_factory=dict)  # acknowledged writes read back: lost, unacknowledged
    schema: int = SCHEMA_VERSION

    # --- building -----------------------------------------------------------------------

    @classmethod
    def build(cls, metrics: PartitionMetrics, run: RunInfo) -> Results:
        """Per-partition and account figures from the per-second buckets."""
        seconds = [key[0] for key in metrics.buckets]
        first = int(metrics.started or min(seconds, default=0))
        last = max(seconds, default=first)
        if metrics.stopped:
            last = max(last, int(metrics.stopped) - 1)
        span = list(range(first, last + 1))
        steady_start = math.ceil(metrics.steady_from) if metrics.steady_from else first
        steady = [s for s in span if s >= steady_start] or span
        # the last second is partial when the run stopped inside it: leave it out of the mean
        if metrics.stopped and len(steady) > 1 and steady[-1] == int(metrics.stopped):
            steady = steady[:-1]
        run.steady_from_s = float(steady[0] - first) if steady else 0.0
        run.steady_seconds = len(steady)
        # a run shorter than the window: the peak window is the steady phase, so peak >= mean
        window = run.peak_window_s = max(1, min(PEAK_WINDOW_S, len(steady)))
        metrics.compact(now=last + COMPACT_AFTER_S + 1)  # only the top keys stay apart from OTHER
        buckets = metrics.buckets

        per_key: dict[tuple[str, str], dict[int, Bucket]] = defaultdict(dict)
        for (second, partition, op_class), bucket in buckets.items():
            per_key[(partition, op_class)][second] = bucket

        rows: list[PartitionRow] = []
        account_series = [0.0] * len(span)
        partition_series: dict[str, list[float]] = {}
        errors: Counter[str] = Counter()
        attempts = backoff_ms = 0
        for (partition, op_class), by_second in sorted(per_key.items()):
            series = [float(by_second[s].entities) if s in by_second else 0.0 for s in span]
            totals = partition_series.setdefault(partition, [0.0] * len(span))
            for i, value in enumerate(series):
                account_series[i] += value
                totals[i] += value
            row = PartitionRow(
                partition=partition, op_class=op_class, requests=0, entities=0,
                mean_eps=_mean(series, span, steady), peak_eps=round(moving_average_peak(series, window), 2),
                target=run.partition_target, ratio=0.0,
            )  # fmt: skip
            for bucket in by_second.values():
                row.requests += bucket.requests
                row.entities += bucket.entities
                row.offered += bucket.offered
                row.failures += bucket.failures
                row.attempts += bucket.attempts
                row.throttled += bucket.throttled
                row.estimated += bucket.estimated
                backoff_ms += bucket.backoff_ms
                errors.update(bucket.errors)
            attempts += row.attempts
            row.ratio = round(row.peak_eps / run.partition_target, 4)
            rows.append(row)
        latency = {}
        for op_class in sorted({c for _, c in metrics.latency}):
            hist = new_histogram()
            for (_, c), h in metrics.latency.items():
                if c == op_class:
                    hist.add(h)
            first_try = metrics.first_attempt.get(op_class, new_histogram())
            latency[op_class] = {
                "p50_ms": _pct(hist, 50), "p95_ms": _pct(hist, 95), "p99_ms": _pct(hist, 99),
                "max_ms": round(hist.get_max_value() / 1000.0, 2),
                "first_attempt_p50_ms": _pct(first_try, 50), "first_attempt_p99_ms": _pct(first_try, 99),
            }  # fmt: skip
        for partition, series in sorted(partition_series.items()):
            op_rows = [r for r in rows if r.partition == partition]
            if len(op_rows) > 1 and partition != OTHER:
                peak = round(moving_average_peak(series, window), 2)
                rows.append(PartitionRow(
                    partition=partition, op_class="ALL", requests=sum(r.requests for r in op_rows),
                    entities=sum(r.entities for r in op_rows), mean_eps=_mean(series, span, steady), peak_eps=peak,
                    target=run.partition_target, ratio=round(peak / run.partition_target, 4),
                    offered=sum(r.offered for r in op_rows), failures=sum(r.failures for r in op_rows),
                    attempts=sum(r.attempts for r in op_rows), throttled=sum(r.throttled for r in op_rows),
                ))  # fmt: skip
        account_peak = round(moving_average_peak(account_series, window), 2)
        account = AccountRow(
            entities=sum(r.entities for r in rows if r.op_class != "ALL"),
            mean_eps=_mean(account_series, span, steady),
            peak_eps=account_peak,
            target=run.account_target,
            ratio=round(account_peak / run.account_target, 4),
        )
        timeseries = []
        percentiles = {key: (_pct(h, 50), _pct(h, 95), _pct(h, 99), round(h.get_max_value() / 1000.0, 2))
                       for key, h in metrics.latency.items()}  # fmt: skip
        for (second, partition, op_class), bucket in sorted(buckets.items()):
            load = metrics.load.get(second, {})
            p50, p95, p99, top = percentiles.get((second, op_class), (0.0, 0.0, 0.0, 0.0))
            timeseries.append({
                "t": second - first, "second": second, "partition": partition, "op_class": op_class,
                "requests": bucket.requests, "failures": bucket.failures, "entities": bucket.entities,
                "offered": bucket.offered, "estimated": bucket.estimated, "attempts": bucket.attempts,
                "throttled": bucket.throttled, "backoff_ms": bucket.backoff_ms, "errors": dict(bucket.errors),
                "p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "max_ms": top, "users": load.get("users"),
            })  # fmt: skip
        load = [{"t": s - first, **v} for s, v in sorted(metrics.load.items()) if first <= s <= last]
        workers = {"reported": sorted(metrics.worker_reports), "lost": list(metrics.lost_workers.values())}
        return cls(
            run=run, partitions=rows, account=account, errors=dict(errors), attempts=attempts,
            timeseries=timeseries, load=load, workers=workers if metrics.worker_reports else {},
            latency=latency, keys=_key_figures(rows, metrics, partition_series),
            retry={"strategy": run.settings.get("retry", ""), "backoff_s": round(backoff_ms / 1000.0, 3),
                   "attempts_per_operation": round(attempts / max(1, sum(r.requests for r in rows if r.op_class != "ALL")), 4)},
            key_ranges=[{"t": second - first, "range": start, "entities": n}
                        for (second, start), n in sorted(metrics.ranges.items()) if n],
        )  # fmt: skip

    # --- the interchange form -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Results:
        return cls(
            run=_make(RunInfo, data["run"]),
            partitions=[_make(PartitionRow, row) for row in data["partitions"]],
            account=_make(AccountRow, data["account"]),
            findings=[_make(Finding, f) for f in data.get("findings", [])],
            errors=dict(data.get("errors", {})),
            attempts=int(data.get("attempts", 0)),
            timeseries=list(data.get("timeseries", [])),
            load=list(data.get("load", [])),
            workers=dict(data.get("workers", {})),
            latency=dict(data.get("latency", {})),
            keys=dict(data.get("keys", {})),
            key_ranges=list(data.get("key_ranges", [])),
            retry=dict(data.get("retry", {})),
            integrity=dict(data.get("integrity", {})),
            schema=int(data.get("schema", SCHEMA_VERSION)),
        )

    @classmethod
    def from_json(cls, text: str) -> Results:
        return cls.from_dict(json.loads(text))

    @classmethod
    def load_file(cls, path: Path) -> Results:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def write(self, out: Path) -> None:
        """results.json and timeseries.csv (one row per second x partition x op class)."""
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(self.to_json(), encoding="utf-8")
        with (out / "timeseries.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=TIMESERIES_FIELDS)
            writer.writeheader()
            for row in self.timeseries:
                errors = ";".join(f"{code}:{n}" for code, n in sorted(row["errors"].items()))
                writer.writerow({**row, "errors": errors})

    # --- questions the verdict and report ask ------------------------------------------------

    def rows(self, op_class: str | None = None) -> list[PartitionRow]:
        return [r for r in self.partitions if op_class is None or r.op_class == op_class]

    def hottest_rows(self, n: int = 10) -> list[PartitionRow]:
        """The ``n`` hottest partitions' rows (by peak, GET, PUT, ALL), then the other partitions' aggregate."""
        peaks: dict[str, float] = {}
        for row in self.partitions:
            if row.partition != OTHER:
                peaks[row.partition] = max(peaks.get(row.partition, 0.0), row.peak_eps)
        shown = set(sorted(peaks, key=lambda p: (-peaks[p], p))[:n])
        order = {"GET": 0, "PUT": 1, "ALL": 2}
        rows = sorted((r for r in self.partitions if r.partition in shown),
                      key=lambda r: (-peaks[r.partition], r.partition, order.get(r.op_class, 3)))  # fmt: skip
        return rows + [r for r in self.partitions if r.partition == OTHER]


def _key_figures(rows: list[PartitionRow], metrics: PartitionMetrics, series: dict[str, list[float]]) -> dict[str, Any]:
    """How concentrated the load was: distinct keys (estimated), tracked keys, top-1 and top-10 shares."""
    totals = sorted(((sum(v), p) for p, v in series.items() if p != OTHER), reverse=True)
    everything = sum(sum(v) for v in series.values()) or 1.0
    return {
        "distinct": round(metrics.distinct_partitions()),
        "tracked": len(totals),
        "top": [p for _, p in totals[:10]],
        "top1_share": round(sum(t for t, _ in totals[:1]) / everything, 4),
        "top10_share": round(sum(t for t, _ in totals[:10]) / everything, 4),
        "estimated_entities": sum(r.estimated for r in rows if r.op_class != "ALL"),
    }


def _mean(series: list[float], span: list[int], steady: list[int]) -> float:
    if not steady:
        return 0.0
    offset = span[0]
    return round(sum(series[s - offset] for s in steady) / len(steady), 2)


def _make(kind: type, data: dict[str, Any]) -> Any:
    names = {f.name for f in fields(kind)}
    return kind(**{k: v for k, v in data.items() if k in names})
