"""Metrics memory at 1,000,000 distinct PartitionKeys, and whether planted hot keys stay exact.

Fires synthetic request events (as the client fires them) through the real metrics
listener: 1,000,000 cold keys touched once each over 100 simulated seconds, plus 5 planted
hot keys with known totals; the listener compacts once a second as it does in a run. Prints
the peak traced memory of the listener (tracemalloc), the top keys' counts against the
planted truth, and the distinct-key estimate.

    .venv/bin/python bench/metrics_memory.py [--keys 1000000] [--seconds 100]
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

from locust.env import Environment
from locust.event import Events

from loadtest.counting.buckets import OTHER
from loadtest.counting.request_listener import PartitionMetrics
from loadtest.results.form import RunInfo
from loadtest.results.summary import build

LIMIT_MB = 100


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=100)
    args = parser.parse_args()

    env = Environment(events=Events())
    clock = Clock()
    gc.collect()
    tracemalloc.start()
    metrics = PartitionMetrics.register(env, clock=clock)
    metrics.started = clock.now
    fire = env.events.request.fire
    planted = {f"hot{i}": (i + 1) * 50 for i in range(5)}  # entities per second each
    truth = dict.fromkeys(planted, 0)
    per_second = args.keys // args.seconds
    started = time.perf_counter()
    for second in range(args.seconds):
        clock.now = 1_000_000 + second + 0.5
        for i in range(per_second):
            key = f"{second * per_second + i:012x}"  # a GUID-like strategy: every key new
            fire(
                request_type="insert",
                name="PUT insert",
                response_time=3.0,
                response_length=1,
                exception=None,
                context={"partition": key, "op_class": "PUT", "entities": 1, "attempts": 1, "throttled": 0},
            )
        for key, entities in planted.items():
            fire(
                request_type="batch",
                name="PUT batch upsert",
                response_time=40.0,
                response_length=entities,
                exception=None,
                context={"partition": key, "op_class": "PUT", "entities": entities, "attempts": 1, "throttled": 0},
            )
            truth[key] += entities
        metrics.compact()
    metrics.stopped = clock.now + 0.5
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    results = build(
        metrics,
        RunInfo(
            id="bench",
            started="",
            duration_s=args.seconds,
            target_kind="bench",
            table="",
            seeded=0,
            partition_target=2000,
            account_target=20000,
            profile="current",
        ),
    )
    tracemalloc.stop()

    counted = {row.partition: row.entities for row in results.partitions if row.op_class == "PUT"}
    exact = all(counted.get(key) == total for key, total in truth.items())
    print(f"distinct PartitionKeys fired     {args.keys + len(planted):,}")
    print(f"distinct estimate (HLL)          {results.keys['distinct']:,}")
    print(f"tracked exactly (top-K)          {results.keys['tracked']}")
    print(f"'other partitions' entities      {counted.get(OTHER, 0):,}")
    for key, total in truth.items():
        print(f"planted {key:<6} counted {counted.get(key, 0):>7,}  planted {total:>7,}")
    print(f"top-K counts exact for planted   {'yes' if exact else 'NO'}")
    print(f"events/s through the listener    {(args.keys + len(planted) * args.seconds) / elapsed:,.0f}")
    print(f"peak metrics memory (tracemalloc) {peak / 2**20:.1f} MB (limit {LIMIT_MB} MB)")
    return 0 if exact and peak < LIMIT_MB * 2**20 else 1


if __name__ == "__main__":
    raise SystemExit(main())
