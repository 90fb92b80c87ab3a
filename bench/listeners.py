"""What each request listener costs per event, side by side in one run: the metrics, the workload profile, both.

Fires the same synthetic request events (as the client fires them: point reads with and without
$select, single writes from 32 clients, batches, a query) through each set of real listeners and
prints microseconds per event and the ratio to the metrics alone (the machines are noisy: compare
the ratios, not the absolute figures).

    .venv/bin/python bench/listeners.py [--events 200000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from locust.env import Environment
from locust.event import Events

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loadtest.counting.request_evidence import RequestProfile  # noqa: E402
from loadtest.counting.request_listener import PartitionMetrics  # noqa: E402


def events(n: int) -> list[dict]:
    rng = random.Random(1)
    out = []
    for i in range(n):
        pk = f"{rng.randrange(16):03d}"
        kind = i % 5
        if kind in (0, 1):
            context = {"partition": pk, "op_class": "GET", "entities": 1, "select": kind == 0}
            out.append({"request_type": "read", "name": "GET point read", "context": context})
        elif kind == 2:
            context = {"partition": pk, "op_class": "PUT", "entities": 1, "client": f"c{i % 32}"}
            out.append({"request_type": "upsert", "name": "PUT upsert merge", "context": context})
        elif kind == 3:
            context = {"partition": pk, "op_class": "PUT", "entities": 100}
            out.append({"request_type": "batch", "name": "PUT batch upsert", "context": context})
        else:
            context = {"partition": pk, "op_class": "GET", "entities": 500, "returned": 5, "estimated": True, "reach": "range"}
            out.append({"request_type": "query", "name": "GET query", "context": context})
    for event in out:
        event["context"].update(attempts=1, throttled=0, backoff_s=0.0, first_ms=2.0)
    return out


def per_event_us(register, fired: list[dict]) -> float:
    environment = Environment(events=Events())
    listeners = register(environment)
    environment.events.test_start.fire(environment=environment)
    fire = environment.events.request.fire
    start = time.perf_counter()
    for event in fired:
        fire(response_time=2.0, response_length=event["context"]["entities"], exception=None, **event)
    elapsed = time.perf_counter() - start
    for listener in listeners:
        getattr(listener, "close", lambda: None)()
    return elapsed / len(fired) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    fired = events(args.events)
    sides = {
        "metrics": lambda env: [PartitionMetrics.register(env)],
        "workload profile": lambda env: [RequestProfile.register(env)],
        "metrics + workload profile": lambda env: [PartitionMetrics.register(env), RequestProfile.register(env)],
    }
    best = {name: min(per_event_us(register, fired) for _ in range(args.rounds)) for name, register in sides.items()}
    base = best["metrics"]
    print(f"{args.events:,} events, best of {args.rounds} rounds")
    for name, us in best.items():
        print(f"  {name:<28} {us:6.2f} us/event  {us / base:5.2f}x the metrics alone")


if __name__ == "__main__":
    main()
