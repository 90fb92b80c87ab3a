"""Engines' results merged into one run's, as if one run had made all the load.

In two passes, each engine read once in each, so memory grows with the run's seconds and keys, not with its engines:

1. each engine's results.json: its ``mergeable`` count's HDR histograms and key sketches added with the metrics' own
   ``merge`` (the one a Locust master uses for its workers), and what each engine adds apart (clock, users, share);
2. each engine's buckets (buckets.parquet beside its results.json, or held in memory) added column by column
   (``bucket_sum``) by wall-clock second, partition and op class, the partitions outside the run's top keys (known
   from the sketches after the first pass) into OTHER as they are read.

``summary.build`` then makes the figures from the sum, so partitions are judged on the load of every engine together,
latency percentiles come from the merged histograms and the top keys from the merged sketches. Exact per key wherever
every engine kept the key apart (each keeps its 50 heaviest keys per second apart and folds the rest into OTHER); the
totals are exact always. The steady phase is when every engine's users all ran.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from ..counting import bucket_frame
from ..counting.buckets import Bucket, BucketKey
from ..counting.counts import RunCounts
from ..counting.request_evidence import RequestProfile
from ..exit_codes import UsageError
from ..outputs import BUCKETS_FILE
from ..results import summary
from ..results.form import Results, RunInfo
from ..results.mergeable import MERGEABLE_VERSION
from ..results.rolled_frame import width_for
from ..service.operations import OpClass
from .bucket_stream import BucketStream
from .bucket_sum import BucketSum
from .engine_load import EngineLoad
from .engine_read import add_buckets, read_buckets, undecoded
from .logged import added_logs
from .merge_workers import MergeWorkers

__all__ = ["APART_FROM", "KEY_DESIGN", "MAX_WORKERS", "TARGET", "BucketsBeside", "check", "merge", "merge_apart", "merge_workers"]

#: The buckets of engines whose results.json names their file, in the order given (by their sources' names): the
#: second pass. Each is its file, or its bytes (downloaded); a ``UsageError`` names one that is missing.
BucketsBeside = Callable[[Sequence[str]], Iterator[Path | bytes]]

#: Settings every engine of one run must share: the keys they address and how.
KEY_DESIGN = ("key_strategy", "partition_key", "row_key_strategy", "key_seed", "skew", "seed_entities")
#: What the engines aimed at, and what they are judged against.
TARGET = ("target_kind", "endpoint", "table", "partition_target", "account_target")
#: Engines from which a merge reads them in worker processes (``merge_apart``); fewer are read in its own, where
#: starting the workers (a second or two) would cost more than it saves.
APART_FROM = 8
MAX_WORKERS = 4  # each holds the run's seconds x keys of sums: the merge's memory grows with them


def merge_workers(engines: int) -> int:
    """The worker processes a merge of ``engines`` uses: one a core this process may use (at most ``MAX_WORKERS``)
    from ``APART_FROM`` engines on, else none."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores, MAX_WORKERS) if engines >= APART_FROM else 0


def check(source: str, results: Results, first: tuple[str, RunInfo] | None, engines: dict[str, str]) -> None:
    """One line (``UsageError``) naming what makes ``results`` not an engine of the run the ``first`` engine ran
    (``engines``: those met so far, by name, to their sources)."""
    if results.ceiling or results.run.simulated or results.engines:
        what = "a ceiling search" if results.ceiling else "a simulation" if results.run.simulated else "already a merge"
        raise UsageError(f"{source}: {what}, not one engine's run: nothing to merge")
    if results.mergeable.get("version") != MERGEABLE_VERSION:
        raise UsageError(
            f"{source}: no mergeable data (results.json written before engines could be merged, version "
            f"{results.mergeable.get('version', 'none')}): rerun it with this version"
        )
    engine = results.mergeable["engine"]
    if engine in engines:
        raise UsageError(f"engine {engine!r} twice: {engines[engine]} and {source}; give each engine's results once")
    if first is None:
        return
    name, base = first
    shards = base.target_kind == results.run.target_kind == "logs"  # reads of one account's logs: each its own id
    if results.run.id != base.id and not shards:
        raise UsageError(f"different run ids: {base.id!r} ({name}) and {results.run.id!r} ({source}); merge one run")
    for field in TARGET:
        ours, theirs = getattr(base, field), getattr(results.run, field)
        if ours != theirs:
            raise UsageError(f"different targets: {field} {ours!r} ({name}) and {theirs!r} ({source})")
    for key in KEY_DESIGN:
        ours, theirs = base.settings.get(key), results.run.settings.get(key)
        if ours != theirs:
            flag = "--" + key.replace("_", "-")
            raise UsageError(f"different key designs: {flag} {ours!r} ({name}) and {theirs!r} ({source})")


def merge(sources: Iterable[tuple[str, Results]], beside: BucketsBeside | None = None, *, run_id: str = "") -> Results:
    """One run's results from its engines' (each checked as it comes); its findings are the verdict's to fill in.
    ``sources`` is read once, one engine at a time: only the sum and each engine's few figures are kept; the buckets of
    those whose results.json names their file are read after, by ``beside``. Each engine must be of run ``run_id``,
    where one is given."""
    merging = _Merging(run_id)
    for source, results in sources:
        merging.add(source, results)
    return merging.merged(merging.summed(beside))


def merge_apart(engines: Iterable[tuple[str, str | Path]], beside: BucketsBeside, workers: int, *, run_id: str = "") -> Results:
    """``merge`` with the engines read and their histograms and buckets added in ``workers`` processes
    (``merge_workers``): ``engines`` gives each one's results.json, its text or its file. The same results, in the
    time of one engine a worker."""
    merging = _Merging(run_id)
    with MergeWorkers(workers) as pool:
        for source, results, error in pool.results(engines):
            merging.add(source, results)
            if error:
                raise undecoded(source, error)
        for histograms in pool.histograms():
            merging.metrics.merge_histograms(histograms)
        sums = merging.summed(beside, pool)
    return merging.merged(sums)  # the workers gone: their memory is not the summary's


class _Merging:
    """The sum so far: the counts added with the metrics' own ``merge``, and what each engine adds apart (its share,
    its clock, its users, workers and integrity)."""

    def __init__(self, run_id: str = "") -> None:
        self.run_id = run_id  # the run every engine must be of (--run-id), if given
        self.metrics, self.workload = RunCounts(), RequestProfile()
        self.first: tuple[str, RunInfo] | None = None  # the first engine's run: what the others must share
        self.engines: dict[str, str] = {}
        self.clocks: list[dict[str, Any]] = []
        self.shares: list[dict[str, Any]] = []
        self.load = EngineLoad()  # the engines' per-second samples: users, CPU, in flight
        self.user_classes: dict[str, dict[str, Any]] = {}
        self.workers: dict[str, list] = {"reported": [], "lost": []}
        self.integrity: list[dict[str, Any]] = []
        self.incomplete: list[dict[str, Any]] = []
        self.arrival_rate, self.users, self.interrupted = 0.0, 0, set()
        self.held: dict[str, bytes] = {}  # engines' buckets given in memory, encoded (``bucket_frame``) till the sum
        self.logs: list[dict[str, Any]] = []  # shards of ``loadtest traffic``: each read's account of its records
        self.beside: dict[str, int] = {}  # engines' buckets in their file: the rows results.json says it holds

    def add(self, source: str, results: Results) -> None:
        if self.run_id and results.run.id != self.run_id:
            raise UsageError(f"--run-id {self.run_id}: {source} is run {results.run.id!r}")
        check(source, results, self.first, self.engines)
        engine = results.mergeable["engine"]
        self.engines[engine] = source
        self.first = self.first or (source, results.run)
        snapshot = results.mergeable["metrics"]
        try:  # the histograms' counts are decoded as they are added (their headers were checked on read)
            self.metrics.merge({**snapshot, "buckets": ()})  # the buckets are added apart, once the top keys are known
        except ValueError as err:
            raise undecoded(source, err) from None
        buckets = snapshot["buckets"]
        if isinstance(buckets, pd.DataFrame):
            self.held[source] = bucket_frame.encode(buckets)
        elif isinstance(buckets, list):  # a results.json written before buckets.parquet holds them
            self.held[source] = bucket_frame.encode(bucket_frame.frame_of(_listed(buckets).items()))
        else:
            self.beside[source] = buckets["rows"]
        self.workload.merge(results.mergeable["workload"])
        self.clocks.append(results.mergeable["metrics"]["clock"])
        self.arrival_rate += results.run.recorded.arrival_rate
        self.users += results.run.users
        self.interrupted.add(results.run.interrupted)
        for one in results.run.user_classes:  # each user class, its users summed (its design as the first engine's)
            known = self.user_classes.setdefault(one["name"], {**one, "users": 0})
            known["users"] += one["users"]
        self.load.add(engine, results.mergeable["samples"])
        self.workers["reported"] += [f"{engine}/{w}" for w in results.workers.get("reported", [])]
        self.workers["lost"] += [{**w, "worker": f"{engine}/{w['worker']}"} for w in results.workers.get("lost", [])]
        self.integrity.append(results.integrity)
        if results.logs:
            self.logs.append(dict(results.logs))
        self.incomplete += [{**step, "step": f"engine {engine}: {step['step']}"} for step in results.incomplete]
        self.shares.append(_share(results))

    def summed(self, beside: BucketsBeside | None, pool: MergeWorkers | None = None) -> BucketSum | BucketStream:
        """Once every engine is in: the run's clock from the engines', and every engine's buckets added (in the
        workers, where there are), the partitions outside the run's top keys into OTHER."""
        if self.first is None:
            raise UsageError("merge: give engines' results (folders or results.json files), or --from-container C --run-id ID")
        metrics, clocks = self.metrics, self.clocks
        metrics.started = min(c["started"] for c in clocks)
        ramps = [c["steady_from"] for c in clocks]  # an engine whose ramp never finished: the run had no steady phase
        metrics.steady_from = None if None in ramps else max(ramps)
        metrics.stopped = max(c["stopped"] for c in clocks)
        metrics.steady_until = min(c["stopped"] for c in clocks)
        if self.logs:  # shards of logs: every second of each was steady (no ramp), so is every second of them all
            metrics.steady_from, metrics.steady_until = metrics.started, metrics.stopped
            if width_for(int(metrics.stopped) - int(metrics.started)) > 1:  # past a day: read as one read's, in bins
                return self._streamed(beside, int(metrics.started), int(metrics.stopped))
        return self._summed(beside, pool, int(metrics.started), int(metrics.stopped))

    def _streamed(self, beside: BucketsBeside | None, first: int, last: int) -> BucketStream:
        """The shards' buckets as sources ``summary`` reads a batch at a time (``bucket_stream``), no array a second."""
        stream = BucketStream(first, last)
        for source, encoded in self.held.items():
            stream.add(source, encoded)
        if self.beside:
            if beside is None:
                raise UsageError(f"{next(iter(self.beside))}: its buckets are in {BUCKETS_FILE}: give the engine's folder")
            for (source, rows), given in zip(self.beside.items(), beside(list(self.beside)), strict=True):
                stream.add(source, given, rows)
        return stream

    def merged(self, sums: BucketSum | BucketStream) -> Results:
        assert self.first is not None
        metrics = self.metrics
        if isinstance(sums, BucketStream):
            metrics.aged.add_source(sums.frames, sums.rows)
        else:
            metrics.add_frame(sums.frame())
            metrics.ranges.update(sums.ranges)
        base = self.first[1]
        info = replace(
            base,
            started=datetime.fromtimestamp(metrics.started, UTC).isoformat(timespec="seconds"),
            duration_s=round(metrics.stopped - metrics.started, 1),
            users=self.users,
            settings={**base.settings, "engine": ",".join(self.engines), "arrival_rate": self.arrival_rate},
            user_classes=list(self.user_classes.values()),
            interrupted=",".join(sorted(self.interrupted - {""})),
        )
        workers = self.workers if self.workers["reported"] else {}
        samples, figures = self.load.samples(), self.workload.figures()
        # request logs' shards over more than a day: one read's form (``rolled_frame``), as ``traffic`` gives it
        merged = summary.build(metrics, info, samples=samples, workers=workers, workload=figures, roll=bool(self.logs))
        merged.integrity = _integrity(self.integrity)
        if self.logs:
            merged.logs = added_logs(self.logs, merged)  # type: ignore[assignment]
        merged.incomplete = self.incomplete
        everything = merged.account.entities or 1
        merged.engines = [{**share, "share": round(share["entities"] / everything, 4)} for share in self.shares]
        metrics.close()
        return merged

    def _summed(self, beside: BucketsBeside | None, pool: MergeWorkers | None, first: int, last: int) -> BucketSum:
        keep = self.metrics.top_partitions()
        sums = BucketSum(keep, first, last)
        for source, encoded in self.held.items():
            add_buckets(sums, source, bucket_frame.read_table(encoded))
        if not self.beside:
            return sums
        if beside is None:
            raise UsageError(f"{next(iter(self.beside))}: its buckets are in {BUCKETS_FILE}: give the engine's folder")
        files = zip(self.beside.items(), beside(list(self.beside)), strict=True)
        if pool is None:
            for (source, rows), given in files:
                add_buckets(sums, source, read_buckets(source, given), rows)
            return sums
        for frame, ranges in pool.bucket_sums(keep, first, last, ((source, given, rows) for (source, rows), given in files)):
            sums.add(frame)  # each worker's sum: only the kept partitions, OTHER and the groups
            sums.ranges.update(ranges)
        return sums


def _listed(listed: Iterable[Any]) -> dict[BucketKey, Bucket]:
    """Buckets as results.json listed them before buckets.parquet: (second, partition, op class, counts)."""
    out: dict[BucketKey, Bucket] = {}
    for second, partition, op_class, counts in listed:
        out.setdefault((int(second), partition, op_class), Bucket()).merge(counts)
    return out


def _integrity(engines: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every engine read its own writes back: the counts add up (none when an engine did not check)."""
    checked = [integrity for integrity in engines if integrity.get("checked")]
    if len(checked) < len(engines):
        return {}
    total: Counter[str] = Counter()
    for integrity in checked:
        total.update({k: v for k, v in integrity.items() if isinstance(v, int) and not isinstance(v, bool)})
    return {"checked": True, **total, "lost_examples": [e for i in checked for e in i.get("lost_examples", [])][:5]}


def _share(results: Results) -> dict[str, Any]:
    """An engine's part of the run (its share of the whole is set once every engine is in), and what its own report
    said of its hottest partition."""
    hottest = results.hottest(1)
    row = results.headline(hottest[0]) if hottest else None
    return {
        "engine": results.mergeable["engine"],
        "host": results.mergeable.get("host", ""),
        "started": results.run.started,
        "duration_s": results.run.duration_s,
        "users": results.run.users,
        "requests": sum(r.requests for r in results.partitions if r.op_class != OpClass.ALL),
        "attempts": results.attempts,
        "entities": results.account.entities,
        "share": 0.0,
        "hottest": hottest[0] if hottest else "",
        "hottest_peak_eps": row.judged(results.open_loop)[0] if row else 0.0,
        "hottest_finding": row.finding if row else "",
        "findings": sorted({str(f.kind) for f in results.findings}),
    }
