"""The request listener: each table operation's request event (and an open loop's unsent slots) counted into the
run's ``RunCounts``, per second, partition and op class, and the run's clock kept from Locust's test events. Counting,
nothing else: the counts and what is done with them are ``counts``'.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from locust.env import Environment
from locust.event import EventHook

from .counts import RunCounts, new_histogram

__all__ = ["LATE_MS", "PartitionMetrics"]

LATE_MS = 10.0  # an open-loop operation that starts this much after it was due is late


class PartitionMetrics(RunCounts):
    """RunCounts what table operations did, per second, partition and op class, from Locust's events."""

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
        hist = self.latency.seconds.get((second, op_class))
        if hist is None:
            hist = self.latency.seconds[(second, op_class)] = new_histogram()
        hist.record_value(max(1, int(response_time * 1000)))
        late = context.get("late_ms")
        if late is not None:
            bucket.scheduled += 1
            bucket.late += late >= LATE_MS
            bucket.dropped += context.get("dropped", 0)
            corrected = self.corrected.seconds.get((second, op_class))
            if corrected is None:
                corrected = self.corrected.seconds[(second, op_class)] = new_histogram()
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
            self.seen(partition, entities)
            if exception is None:
                target.entities += entities
                if context.get("estimated"):
                    target.estimated += entities

    def on_unsent(self, demand: list[tuple[int, str, str, int]], **_: Any) -> None:
        """Slots an open loop dropped (or still owed at the end): (second due, partition, op class, entities) each,
        drawn as the operation would have been; counted as demand, never as requests."""
        for second, partition, op_class, entities in demand:
            self._bucket(second, partition, op_class).unsent += entities
            self.seen(partition, entities)

    def on_test_start(self, **_: Any) -> None:
        self.reset(self.clock())

    def on_spawning_complete(self, user_count: int, **_: Any) -> None:
        if self.steady_from is None:
            self.steady_from = self.clock()

    def on_test_stop(self, **_: Any) -> None:
        """When the users were asked to stop (Locust's ``test_stopping``; ``test_stop`` if it never fired): the
        schedule's end. Operations still in flight finish after it, counted in their own seconds."""
        if self.stopped is None:
            self.stopped = self.clock()
