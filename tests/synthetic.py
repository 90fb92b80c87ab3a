"""Synthetic request events for unit tests: what the client fires, without a table service."""

from __future__ import annotations

from locust.env import Environment
from locust.event import Events

from loadtest.counting.request_listener import PartitionMetrics


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def environment() -> Environment:
    return Environment(events=Events())


def fire(
    env,
    *,
    op="read",
    op_class="GET",
    partition="hot",
    entities=1,
    ms=5.0,
    error=None,
    attempts=1,
    throttled=0,
    unsent=None,
    rows=None,
):
    """One request event; ``unsent``: an open loop's slots dropped before it, as (epoch second, partition, op class,
    entities)."""
    late = {"late_ms": 0.0, "dropped": len(unsent)} if unsent is not None else {}
    if unsent:
        env.events.unsent.fire(demand=unsent)
    env.events.request.fire(
        request_type=op,
        name=f"{op_class} {op}",
        response_time=ms,
        response_length=entities,
        exception=RuntimeError(error) if error else None,
        context={
            "partition": partition,
            "op_class": op_class,
            "entities": entities,
            "attempts": attempts,
            "throttled": throttled,
            "error_code": error,
            **late,
            **({"rows": rows} if rows is not None else {}),
        },
    )


def listener(start: float = 1_000_000.0) -> tuple[Clock, Environment, PartitionMetrics]:
    """The real request listener on a fake clock at ``start``, its test started (a test compacts it as a run does)."""
    clock, env = Clock(start), environment()
    metrics = PartitionMetrics.register(env, clock=clock)
    metrics.on_test_start()
    return clock, env, metrics


def recorded(seconds: dict[int, list[dict]], *, steady_from: int = 0, start: float = 1_000_000.0, env=None, compact=False):
    """Metrics after firing ``seconds[t]`` events in second ``t`` (relative to ``start``), on ``env`` if given;
    ``compact``: compacted after each second, as a run's are (keys outside the heaviest fold as their seconds age)."""
    env = env or environment()
    clock = Clock(start)
    metrics = PartitionMetrics.register(env, clock=clock)
    metrics.started = start
    for t in sorted(seconds):
        clock.now = start + t + 0.5
        for kwargs in seconds[t]:
            fire(env, **kwargs)
        if compact:
            metrics.compact()
    metrics.steady_from = start + steady_from
    metrics.stopped = start + max(seconds, default=0) + 1
    return metrics
