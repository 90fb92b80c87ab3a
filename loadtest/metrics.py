"""The request listener: per-second counts of requests, entities and errors per partition — counting
and merging, nothing else.

Buckets are keyed by (second, partition, op_class); latency goes into one HDR histogram per
(second, op_class) (microseconds, 2 significant digits), not Locust's rounded buckets.

Many keys, bounded memory: a frequent-items sketch (Apache DataSketches) follows the heaviest
PartitionKeys and an HLL sketch estimates how many distinct ones the run touched. Seconds
older than ``COMPACT_AFTER_S`` keep exact buckets only for the current top ``TOP_K`` keys;
the rest fold into one ``OTHER`` bucket per second. A key hot from the start is never folded,
so its counts stay exact.

A worker hands its counts to the master with ``drain`` (and starts afresh, so nothing is
counted twice); the master adds them with ``merge``. When that happens is ``distributed``'s job.
An engine's whole count (``snapshot``) goes into its results.json; ``loadtest merge`` adds the
engines' with the same ``merge``.
"""

from __future__ import annotations

import base64
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import datasketches as ds
from hdrh.histogram import HdrHistogram
from locust.env import Environment
from locust.event import EventHook

from .buckets import OTHER, Bucket, BucketKey, fold

__all__ = ["PartitionMetrics", "TOP_K", "max_ms", "ms_at", "new_histogram"]

LATENCY_MAX_US = 3_600_000_000  # one hour
TOP_K = 50  # PartitionKeys kept exactly, per second
COMPACT_AFTER_S = 5  # seconds a bucket stays exact whatever its key, for late merges from workers
SKETCH_LG_K = 12  # frequent items: up to 3 * 2**12 / 4 tracked; hll: ~1.6 % error
LATE_MS = 10.0  # an open-loop operation that starts this much after it was due is late


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, LATENCY_MAX_US, 2)


def ms_at(hist: HdrHistogram, percentile: float) -> float:
    """A histogram's percentile in milliseconds (its values are microseconds); 0 when it is empty."""
    return round(hist.get_value_at_percentile(percentile) / 1000.0, 2) if hist.get_total_count() else 0.0


def max_ms(hist: HdrHistogram) -> float:
    return round(hist.get_max_value() / 1000.0, 2)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


class PartitionMetrics:
    """Counts what table operations did, per second, partition and op class."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock  # seconds since the epoch; tests pass their own
        self.buckets: dict[BucketKey, Bucket] = {}
        self.latency: dict[tuple[int, str], HdrHistogram] = {}
        self.first_attempt: dict[str, HdrHistogram] = {}  # per op class: the first attempt's latency
        self.corrected: dict[tuple[int, str], HdrHistogram] = {}  # per second and op class, open loop: completion - due
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self.distinct = ds.hll_union(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        self.folded_before = 0  # seconds before this are compacted
        self._top: frozenset[str] = frozenset()
        self.ranges: Counter[tuple[int, str]] = Counter()  # (second, first key character) -> folded entities
        self.started: float | None = None
        self.steady_from: float | None = None
        self.stopped: float | None = None
        self.steady_until: float | None = None  # merged engines: when the first one stopped (the steady phase's end)

    @classmethod
    def register(cls, environment: Environment, clock: Callable[[], float] = time.time) -> PartitionMetrics:
        metrics = cls(clock)
        events = environment.events
        events.request.add_listener(metrics.on_request)
        if not hasattr(events, "unsent"):  # an open loop's slots never sent: their demand, without a request
            events.unsent = EventHook()
        events.unsent.add_listener(metrics.on_unsent)
        events.test_start.add_listener(metrics.on_test_start)
        events.spawning_complete.add_listener(metrics.on_spawning_complete)
        events.test_stopping.add_listener(metrics.on_test_stop)
        events.test_stop.add_listener(metrics.on_test_stop)
        events.quit.add_listener(lambda **_: metrics.close())
        return metrics

    # --- events -----------------------------------------------------------------------

    def on_request(
        self,
        request_type: str,
        name: str,
        response_time: float,
        response_length: int,
        exception: BaseException | None = None,
        context: dict[str, Any] | None = None,
        **_: Any,
    ) -> None:
        if not context or "partition" not in context:
            return  # not a table operation of ours
        now, op_class = self.clock(), context["op_class"]
        second = asked = int(now)
        bucket = self._bucket(second, context["partition"], op_class)
        bucket.requests += 1
        bucket.attempts += context.get("attempts", 1)
        bucket.throttled += context.get("throttled", 0)
        if "throttled_by" in context:
            bucket.throttled_by.update(context["throttled_by"])
        bucket.backoff_ms += int(context.get("backoff_s", 0.0) * 1000)
        if response_time > bucket.longest_ms:
            bucket.longest_ms = int(response_time)
        first = self.first_attempt.get(op_class)
        if first is None:
            first = self.first_attempt[op_class] = new_histogram()
        first.record_value(max(1, int(context.get("first_ms", response_time) * 1000)))
        hist = self.latency.get((second, op_class))
        if hist is None:
            hist = self.latency[(second, op_class)] = new_histogram()
        hist.record_value(max(1, int(response_time * 1000)))
        late = context.get("late_ms")
        if late is not None:
            bucket.scheduled += 1
            bucket.late += late >= LATE_MS
            bucket.dropped += context.get("dropped", 0)
            corrected = self.corrected.get((second, op_class))
            if corrected is None:
                corrected = self.corrected[(second, op_class)] = new_histogram()
            corrected.record_value(max(1, int((response_time + late) * 1000)))
            asked = int(now - (response_time + late) / 1000.0)  # an open loop's demand counts in the second it was due
        if exception is not None:
            bucket.failures += 1
            bucket.errors[context.get("error_code") or type(exception).__name__] += 1
        elif "rows" in context:
            bucket.rows += context["rows"]
        spread = context.get("partitions")  # a scan across PartitionKeys: entities go where they were
        for partition, entities in spread.items() if spread else ((context["partition"], context["entities"]),):
            target = bucket if partition == context["partition"] else self._bucket(second, partition, op_class)
            (target if asked == second else self._bucket(asked, partition, op_class)).offered += entities
            self.heavy.update(partition, max(1, entities))
            self._distinct_here.update(partition)
            if exception is None:
                target.entities += entities
                if context.get("estimated"):
                    target.estimated += entities

    def on_unsent(self, demand: list[tuple[int, str, str, int]], **_: Any) -> None:
        """Slots an open loop dropped (or still owed at the end): (second due, partition, op class, entities) each,
        drawn as the operation would have been; counted as demand, never as requests."""
        for second, partition, op_class, entities in demand:
            self._bucket(second, partition, op_class).unsent += entities
            self.heavy.update(partition, max(1, entities))
            self._distinct_here.update(partition)

    def _bucket(self, second: int, partition: str, op_class: str) -> Bucket:
        if second < self.folded_before and partition not in self._top:
            partition = OTHER  # a late report for a compacted second
        key = (second, partition, op_class)
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket()
        return bucket

    def on_test_start(self, **_: Any) -> None:
        self.buckets.clear()
        self.latency.clear()
        self.first_attempt.clear()
        self.corrected.clear()
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self.distinct = ds.hll_union(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        self.folded_before = 0
        self._top = frozenset()
        self.ranges.clear()
        self.started, self.steady_from, self.stopped = self.clock(), None, None

    def on_spawning_complete(self, user_count: int, **_: Any) -> None:
        if self.steady_from is None:
            self.steady_from = self.clock()

    def on_test_stop(self, **_: Any) -> None:
        """When the users were asked to stop (Locust's ``test_stopping``; ``test_stop`` if it never fired): the
        schedule's end. Operations still in flight finish after it, counted in their own seconds."""
        if self.stopped is None:
            self.stopped = self.clock()

    # --- a worker's counts, to the master ---------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything counted, in the form ``merge`` adds (histograms and sketches in their libraries' own encodings),
        and the run's clock; nothing is reset (an engine's results.json carries it for ``loadtest merge``)."""
        distinct = ds.hll_union(SKETCH_LG_K)
        distinct.update(self.distinct.get_result())
        distinct.update(self._distinct_here)
        return {
            "buckets": [[*key, bucket.to_dict()] for key, bucket in self.buckets.items()],
            "latency": [[*key, hist.encode().decode("ascii")] for key, hist in self.latency.items()],
            "first_attempt": [[key, hist.encode().decode("ascii")] for key, hist in self.first_attempt.items()],
            "corrected": [[*key, hist.encode().decode("ascii")] for key, hist in self.corrected.items()],
            "heavy": _b64(self.heavy.serialize()),
            "distinct": _b64(distinct.get_result().serialize_compact()),
            "ranges": [[second, start, n] for (second, start), n in sorted(self.ranges.items())],
            "clock": {"started": self.started, "steady_from": self.steady_from, "stopped": self.stopped},
        }

    def drain(self) -> dict[str, Any]:
        """Everything since the last drain, as a message; then start afresh (a worker)."""
        drained = self.snapshot()
        self.buckets.clear()
        self.latency.clear()
        self.first_attempt.clear()
        self.corrected.clear()
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        return drained

    def merge(self, data: Mapping[str, Any] | None) -> None:
        """Add what a worker drained (on the master)."""
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
        for second, op_class, encoded in data.get("corrected", ()):
            self.corrected.setdefault((int(second), op_class), new_histogram()).decode_and_add(encoded)
        self.heavy.merge(ds.frequent_strings_sketch.deserialize(base64.b64decode(data["heavy"])))
        self.distinct.update(ds.hll_sketch.deserialize(base64.b64decode(data["distinct"])))
        for second, start, entities in data.get("ranges", ()):
            self.ranges[(int(second), start)] += entities

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
        stale = [k for k in self.buckets if k[0] < cutoff and k[1] not in self._top and k[1] != OTHER]
        others, folded = fold({k: self.buckets.pop(k) for k in stale}, keep=self._top, before=cutoff)
        for key, bucket in others.items():
            self._bucket(*key).add(bucket)
        self.ranges.update(folded)
        self.folded_before = cutoff
