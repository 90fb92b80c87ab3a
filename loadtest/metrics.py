"""The request listener: per-second counts of requests, entities and errors per partition.

Buckets are keyed by (second, partition, op_class); latency goes into one HDR histogram per
(second, op_class) (microseconds, 2 significant digits), not Locust's rounded buckets.

Many keys, bounded memory: a frequent-items sketch (Apache DataSketches) follows the heaviest
PartitionKeys and an HLL sketch estimates how many distinct ones the run touched. Seconds
older than ``COMPACT_AFTER_S`` keep exact buckets only for the current top ``TOP_K`` keys;
the rest fold into one ``OTHER`` bucket per second. A key hot from the start is never folded,
so its counts stay exact.

Workers hand their buckets, histograms and sketches to the master in ``report_to_master``
(and start afresh, so nothing is counted twice); the master merges them in ``worker_report``.
"""

from __future__ import annotations

import base64
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import datasketches as ds
import gevent
from hdrh.histogram import HdrHistogram

__all__ = ["Bucket", "OTHER", "PartitionMetrics", "TOP_K", "new_histogram"]

LATENCY_MAX_US = 3_600_000_000  # one hour
REPORT_KEY = "partition_stress"
STOP_MESSAGE = "partition_stress_stop"  # master -> worker: stop your users now (the master is quitting)
FINAL_MESSAGE = "partition_stress_final"  # worker -> master: the last buckets, after the users stopped
TOP_K = 50  # PartitionKeys kept exactly, per second
COMPACT_AFTER_S = 5  # seconds a bucket stays exact whatever its key, for late merges from workers
OTHER = "#other"  # '#' is forbidden in keys: this never collides with a real PartitionKey
SKETCH_LG_K = 12  # frequent items: up to 3 * 2**12 / 4 tracked; hll: ~1.6 % error
_COUNTERS = ("requests", "failures", "entities", "offered", "estimated", "attempts", "throttled", "backoff_ms")


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, LATENCY_MAX_US, 2)


@dataclass(slots=True)
class Bucket:
    """One second of one op class on one partition (or on the ``OTHER`` partitions together)."""

    requests: int = 0
    failures: int = 0
    entities: int = 0  # served: entities of operations that succeeded
    offered: int = 0  # asked for: every operation's entities, failed ones included
    estimated: int = 0  # of the entities, those counted from what the run knows (filtered scans)
    attempts: int = 0
    throttled: int = 0
    backoff_ms: int = 0  # time the retry strategy spent waiting
    errors: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {**{name: getattr(self, name) for name in _COUNTERS}, "errors": dict(self.errors)}

    def merge(self, data: dict[str, Any]) -> None:
        for name in _COUNTERS:
            setattr(self, name, getattr(self, name) + data.get(name, 0))
        self.errors.update(data.get("errors", {}))


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


class PartitionMetrics:
    """Counts what table operations did, per second, partition and op class."""

    def __init__(self, environment: Any, clock: Any = time.time) -> None:
        self.environment = environment
        self.clock = clock  # seconds since the epoch; tests pass their own
        self.buckets: dict[tuple[int, str, str], Bucket] = {}
        self.latency: dict[tuple[int, str], HdrHistogram] = {}
        self.first_attempt: dict[str, HdrHistogram] = {}  # per op class: the first attempt's latency
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self.distinct = ds.hll_union(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        self.folded_before = 0  # seconds before this are compacted
        self._top: frozenset[str] = frozenset()
        self.ranges: dict[tuple[int, str], int] = {}  # (second, first key character) -> folded entities
        self.load: dict[int, dict[str, float]] = {}  # second -> users, cpu
        self.started: float | None = None
        self.steady_from: float | None = None
        self.stopped: float | None = None
        self.worker_reports: dict[str, float] = {}  # worker id -> last report (master only)
        self.finals: set[str] = set()  # workers whose last buckets arrived
        self.lost_workers: dict[str, dict[str, Any]] = {}
        self._sampler: gevent.Greenlet | None = None

    @classmethod
    def register(cls, environment: Any, clock: Any = time.time) -> PartitionMetrics:
        metrics = cls(environment, clock)
        events = environment.events
        events.request.add_listener(metrics.on_request)
        events.test_start.add_listener(metrics.on_test_start)
        events.spawning_complete.add_listener(metrics.on_spawning_complete)
        events.test_stop.add_listener(metrics.on_test_stop)
        events.report_to_master.add_listener(metrics.on_report_to_master)
        events.worker_report.add_listener(metrics.on_worker_report)
        events.quit.add_listener(lambda **_: metrics.close())
        runner = environment.runner
        if _is_worker(environment):
            runner.register_message(STOP_MESSAGE, lambda **_: runner.stop(), concurrent=True)
            events.test_stop.add_listener(metrics.on_worker_test_stop)
        elif runner is not None and hasattr(runner, "clients"):
            runner.register_message(FINAL_MESSAGE, metrics.on_final)
        return metrics

    # --- events -----------------------------------------------------------------------

    def on_request(self, request_type: str, name: str, response_time: float, response_length: int,
                   exception: BaseException | None = None, context: dict[str, Any] | None = None, **_: Any) -> None:  # fmt: skip
        if not context or "partition" not in context:
            return  # not a table operation of ours
        second, op_class = int(self.clock()), context["op_class"]
        bucket = self._bucket(second, context["partition"], op_class)
        bucket.requests += 1
        bucket.attempts += context.get("attempts", 1)
        bucket.throttled += context.get("throttled", 0)
        bucket.backoff_ms += int(context.get("backoff_s", 0.0) * 1000)
        first = self.first_attempt.get(op_class)
        if first is None:
            first = self.first_attempt[op_class] = new_histogram()
        first.record_value(max(1, int(context.get("first_ms", response_time) * 1000)))
        hist = self.latency.get((second, op_class))
        if hist is None:
            hist = self.latency[(second, op_class)] = new_histogram()
        hist.record_value(max(1, int(response_time * 1000)))
        if exception is not None:
            bucket.failures += 1
            bucket.errors[context.get("error_code") or type(exception).__name__] += 1
        spread = context.get("partitions")  # a scan across PartitionKeys: entities go where they were
        for partition, entities in (spread.items() if spread else ((context["partition"], context["entities"]),)):
            target = bucket if partition == context["partition"] else self._bucket(second, partition, op_class)
            target.offered += entities
            self.heavy.update(partition, max(1, entities))
            self._distinct_here.update(partition)
            if exception is None:
                target.entities += entities
                if context.get("estimated"):
                    target.estimated += entities

    def _bucket(self, second: int, partition: str, op_class: str) -> Bucket:
        if second < self.folded_before and partition not in self._top:
            partition = OTHER  # a late report for a compacted second
        key = (second, partition, op_class)
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket()
        return bucket

    def on_test_start(self, environment: Any, **_: Any) -> None:
        self.buckets.clear()
        self.latency.clear()
        self.first_attempt.clear()
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self.distinct = ds.hll_union(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        self.folded_before = 0
        self._top = frozenset()
        self.ranges.clear()
        self.load.clear()
        self.lost_workers.clear()
        self.worker_reports.clear()
        self.finals.clear()
        self.started, self.steady_from, self.stopped = self.clock(), None, None
        if self._sampler is None and not _is_worker(environment):
            self._sampler = gevent.spawn(self._sample_load)

    def on_spawning_complete(self, user_count: int, **_: Any) -> None:
        if self.steady_from is None:
            self.steady_from = self.clock()

    def on_test_stop(self, environment: Any, **_: Any) -> None:
        self.stopped = self.clock()
        if self._sampler is not None:
            self._sampler.kill(block=False)
            self._sampler = None

    def on_report_to_master(self, client_id: str, data: dict[str, Any]) -> None:
        data[REPORT_KEY] = self._drain()

    def on_worker_report(self, client_id: str, data: dict[str, Any]) -> None:
        self.worker_reports[client_id] = self.clock()
        self._merge(data.get(REPORT_KEY))

    def on_worker_test_stop(self, environment: Any, **_: Any) -> None:
        """On a worker whose users have stopped: hand over what the periodic reports have not."""
        environment.runner.send_message(FINAL_MESSAGE, {REPORT_KEY: self._drain()})

    def on_final(self, environment: Any, msg: Any, **_: Any) -> None:
        self.worker_reports[msg.node_id] = self.clock()
        self._merge(msg.data.get(REPORT_KEY))
        self.finals.add(msg.node_id)

    def collect_workers(self, runner: Any, timeout: float) -> list[str]:
        """On the master at test stop: stop workers still running and wait for every worker's last buckets.

        Locust's headless quit stops the master before its workers; without this, the seconds
        after their last periodic report would be missing. Returns the workers that never answered.
        """
        running = [c.id for c in runner.clients.values() if c.state in ("spawning", "running")]
        for client_id in running:
            runner.send_message(STOP_MESSAGE, None, client_id)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_workers(runner)
            waiting = [
                c.id for c in runner.clients.values()
                if c.id not in self.finals and c.id not in self.lost_workers
                and (c.id in self.worker_reports or c.id in running)
            ]  # fmt: skip
            if not waiting:
                return []
            gevent.sleep(0.1)
        return waiting

    def _drain(self) -> dict[str, Any]:
        """Everything since the last report, then start afresh (a worker)."""
        drained = {
            "buckets": [[*key, bucket.to_dict()] for key, bucket in self.buckets.items()],
            "latency": [[*key, hist.encode().decode("ascii")] for key, hist in self.latency.items()],
            "first_attempt": [[key, hist.encode().decode("ascii")] for key, hist in self.first_attempt.items()],
            "heavy": _b64(self.heavy.serialize()),
            "distinct": _b64(self._distinct_here.serialize_compact()),
        }
        self.buckets.clear()
        self.latency.clear()
        self.first_attempt.clear()
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        return drained

    def _merge(self, data: Any) -> None:
        if not data:
            return
        for second, partition, op_class, bucket in data["buckets"]:
            self._bucket(int(second), partition, op_class).merge(bucket)
        for second, op_class, encoded in data["latency"]:
            hist = self.latency.get((int(second), op_class))
            if hist is None:
                hist = self.latency[(int(second), op_class)] = new_histogram()
            hist.decode_and_add(encoded)
        for op_class, encoded in data.get("first_attempt", ()):
            self.first_attempt.setdefault(op_class, new_histogram()).decode_and_add(encoded)
        self.heavy.merge(ds.frequent_strings_sketch.deserialize(base64.b64decode(data["heavy"])))
        self.distinct.update(ds.hll_sketch.deserialize(base64.b64decode(data["distinct"])))

    def close(self) -> None:
        """Free the sketches before the interpreter exits (nanobind reports objects still alive then)."""
        self.heavy = self.distinct = self._distinct_here = None  # type: ignore[assignment]

    # --- many keys ------------------------------------------------------------------------

    def top_partitions(self, k: int = TOP_K) -> list[str]:
        """The k heaviest PartitionKeys by entities (the sketch's estimates; exact below its capacity)."""
        items = self.heavy.get_frequent_items(ds.frequent_items_error_type.NO_FALSE_NEGATIVES)
        return [item[0] for item in sorted(items, key=lambda item: (-item[1], item[0]))[:k]]

    def distinct_partitions(self) -> float:
        union = ds.hll_union(SKETCH_LG_K)
        union.update(self.distinct.get_result())
        union.update(self._distinct_here)
        return union.get_result().get_estimate()

    def compact(self, now: float | None = None) -> None:
        """Fold the buckets of seconds older than ``COMPACT_AFTER_S`` outside the top keys into ``OTHER``."""
        cutoff = int(self.clock() if now is None else now) - COMPACT_AFTER_S
        if cutoff <= self.folded_before:
            return
        self._top = frozenset(self.top_partitions())
        for key in [k for k in self.buckets if k[0] < cutoff and k[1] not in self._top and k[1] != OTHER]:
            second, partition, op_class = key
            bucket = self.buckets.pop(key)
            self._bucket(second, OTHER, op_class).merge(bucket.to_dict())
            span = (second, partition[:1])  # the key range it falls in, for the heat map
            self.ranges[span] = self.ranges.get(span, 0) + bucket.entities
        self.folded_before = cutoff

    def _sample_load(self) -> None:
        """Once a second: users running, the generator's CPU (ramp, steady, saturation) and lost workers."""
        runner = self.environment.runner
        while True:
            gevent.sleep(1.0 - time.time() % 1.0)
            if runner is None:
                continue
            self.load[int(time.time()) - 1] = {"users": runner.user_count, "cpu": float(runner.current_cpu_usage)}
            self._check_workers(runner)
            self.compact()

    def _check_workers(self, runner: Any) -> None:
        """Record a worker that went missing (no heartbeat): its unreported seconds are lost."""
        clients = getattr(runner, "clients", None)
        if clients is None or self.started is None:
            return
        now = self.clock()
        for client in list(clients.values()):
            if client.state == "missing" and client.id not in self.lost_workers:
                last = self.worker_reports.get(client.id)
                self.lost_workers[client.id] = {
                    "worker": client.id,
                    "lost_at_s": round(now - self.started, 1),
                    "last_report_s": round(last - self.started, 1) if last else None,
                }


def _is_worker(environment: Any) -> bool:
    from locust.runners import WorkerRunner

    return isinstance(environment.runner, WorkerRunner)
