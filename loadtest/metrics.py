"""The request listener: per-second buckets of requests, entities, errors and latency per partition.

Buckets are keyed by (second, partition, op_class). Latency goes into an HDR histogram
(microseconds, 2 significant digits), not Locust's rounded buckets. Workers hand their
buckets to the master in ``report_to_master`` (and forget them, so none is counted twice);
the master merges them in ``worker_report``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import gevent
from hdrh.histogram import HdrHistogram

__all__ = ["Bucket", "PartitionMetrics", "new_histogram"]

LATENCY_MAX_US = 3_600_000_000  # one hour
REPORT_KEY = "partition_stress"
STOP_MESSAGE = "partition_stress_stop"  # master -> worker: stop your users now (the master is quitting)
FINAL_MESSAGE = "partition_stress_final"  # worker -> master: the last buckets, after the users stopped


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, LATENCY_MAX_US, 2)


@dataclass
class Bucket:
    """One second of one op class on one partition."""

    requests: int = 0
    failures: int = 0
    entities: int = 0  # served: entities of operations that succeeded
    offered: int = 0  # asked for: every operation's entities, failed ones included
    estimated: int = 0  # of the entities, those counted from what the run knows (filtered scans)
    attempts: int = 0
    throttled: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    latency: HdrHistogram = field(default_factory=new_histogram)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "failures": self.failures,
            "entities": self.entities,
            "offered": self.offered,
            "estimated": self.estimated,
            "attempts": self.attempts,
            "throttled": self.throttled,
            "errors": dict(self.errors),
            "latency": self.latency.encode().decode("ascii"),
        }

    def merge(self, data: dict[str, Any]) -> None:
        for name in ("requests", "failures", "entities", "offered", "estimated", "attempts", "throttled"):
            setattr(self, name, getattr(self, name) + data.get(name, 0))
        self.errors.update(data["errors"])
        self.latency.decode_and_add(data["latency"])


class PartitionMetrics:
    """Counts what table operations did, per second, partition and op class."""

    def __init__(self, environment: Any, clock: Any = time.time) -> None:
        self.environment = environment
        self.clock = clock  # seconds since the epoch; tests pass their own
        self.buckets: dict[tuple[int, str, str], Bucket] = {}
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
        bucket.latency.record_value(max(1, int(response_time * 1000)))
        if exception is not None:
            bucket.failures += 1
            bucket.errors[context.get("error_code") or type(exception).__name__] += 1
        spread = context.get("partitions")  # a scan across PartitionKeys: entities go where they were
        for partition, entities in (spread.items() if spread else ((context["partition"], context["entities"]),)):
            target = bucket if partition == context["partition"] else self._bucket(second, partition, op_class)
            target.offered += entities
            if exception is None:
                target.entities += entities
                if context.get("estimated"):
                    target.estimated += entities

    def _bucket(self, second: int, partition: str, op_class: str) -> Bucket:
        key = (second, partition, op_class)
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket()
        return bucket

    def on_test_start(self, environment: Any, **_: Any) -> None:
        self.buckets.clear()
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
        self._merge(data.get(REPORT_KEY, ()))

    def on_worker_test_stop(self, environment: Any, **_: Any) -> None:
        """On a worker whose users have stopped: hand over what the periodic reports have not."""
        environment.runner.send_message(FINAL_MESSAGE, {REPORT_KEY: self._drain()})

    def on_final(self, environment: Any, msg: Any, **_: Any) -> None:
        self.worker_reports[msg.node_id] = self.clock()
        self._merge(msg.data.get(REPORT_KEY, ()))
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

    def _drain(self) -> list[list[Any]]:
        drained = [[*key, bucket.to_dict()] for key, bucket in self.buckets.items()]
        self.buckets.clear()
        return drained

    def _merge(self, buckets: Any) -> None:
        for second, partition, op_class, bucket in buckets:
            key = (int(second), partition, op_class)
            mine = self.buckets.get(key)
            if mine is None:
                mine = self.buckets[key] = Bucket()
            mine.merge(bucket)

    def _sample_load(self) -> None:
        """Once a second: users running, the generator's CPU (ramp, steady, saturation) and lost workers."""
        runner = self.environment.runner
        while True:
            gevent.sleep(1.0 - time.time() % 1.0)
            if runner is None:
                continue
            self.load[int(time.time()) - 1] = {"users": runner.user_count, "cpu": float(runner.current_cpu_usage)}
            self._check_workers(runner)

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
