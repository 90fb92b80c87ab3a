"""The request listener's memory over a simulated soak: does it stay bounded, and flat in the last hours?

Fires synthetic request events (as the client fires them, GET and PUT) through the real listener
(``PartitionMetrics.register``) with a fake clock: ``--rate`` events a simulated second over ``--keys``
PartitionKeys, the listener compacting once a second as a run does. Prints, at every simulated hour, the
listener's memory (the process's resident set less what it was before the listener was made), the events fired, the
buckets held as objects (the recent window's) and those put away as compressed columns; then whether the last
``--flat-hours`` grew.

    .venv/bin/python bench/soak_memory.py [--hours 24] [--rate 100] [--keys 50] [--flat-hours 6]

The issue's goal: at most 300 MB after 24 simulated hours at 100 events/s over 50 keys, and flat over the last 6.
"""

from __future__ import annotations

import argparse
import gc
import random
import time

import psutil
from locust.env import Environment
from locust.event import Events

from loadtest.counting.request_listener import PartitionMetrics

LIMIT_MB = 300
FLAT_MB = 10  # what the last hours may grow, all of them together


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24)
    parser.add_argument("--rate", type=int, default=100, help="events a simulated second")
    parser.add_argument("--keys", type=int, default=50)
    parser.add_argument("--flat-hours", type=float, default=6)
    args = parser.parse_args()

    env = Environment(events=Events())
    clock = Clock()
    before = rss_mb()
    metrics = PartitionMetrics.register(env, clock=clock)
    env.events.test_start.fire(environment=env)
    env.events.spawning_complete.fire(user_count=args.rate)
    fire = env.events.request.fire
    keys = [f"key{i:03d}" for i in range(args.keys)]
    draw = random.Random(7)
    latency = [max(0.2, draw.lognormvariate(1.2, 0.6)) for _ in range(4096)]  # ms: a spread the histograms must hold
    seconds, hourly, started = int(args.hours * 3600), {}, time.perf_counter()
    for second in range(seconds):
        base = clock.now = 1_000_000.0 + second
        for i in range(args.rate):
            clock.now = base + i / args.rate
            op_class = "GET" if i % 2 else "PUT"
            fire(
                request_type="read" if op_class == "GET" else "upsert",
                name=f"{op_class} op",
                response_time=latency[(second * args.rate + i) % len(latency)],
                response_length=1,
                exception=None,
                context={"partition": keys[draw.randrange(args.keys)], "op_class": op_class, "entities": 1, "attempts": 1},
            )
        metrics.compact()
        if (second + 1) % 3600 == 0:
            hour = (second + 1) // 3600
            hourly[hour] = rss_mb() - before
            print(f"hour {hour:3d}: {hourly[hour]:8.1f} MB  ({(second + 1) * args.rate:,} events, "
                  f"{time.perf_counter() - started:,.0f} s; {len(metrics.buckets):,} buckets held, "
                  f"{metrics.aged.rows:,} put away in {metrics.aged.encoded_bytes / 2**20:.1f} MB)", flush=True)  # fmt: skip
    env.events.test_stop.fire(environment=env)
    last, flat_from = max(hourly, default=0), max(hourly, default=0) - int(args.flat_hours)
    if not hourly:
        return 0
    grew = hourly[last] - hourly.get(flat_from, hourly[min(hourly)])
    print(f"after {last} h: {hourly[last]:.1f} MB (goal <= {LIMIT_MB}); the last {last - flat_from} h grew {grew:+.1f} MB "
          f"(flat: within {FLAT_MB})")  # fmt: skip
    return 0 if hourly[last] <= LIMIT_MB and grew <= FLAT_MB else 1


if __name__ == "__main__":
    raise SystemExit(main())
