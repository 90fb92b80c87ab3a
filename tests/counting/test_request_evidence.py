"""The request profile counts what the checklist asks about, from synthetic request events."""

from __future__ import annotations

import random

import pytest
from locust.env import Environment
from locust.event import Events

from loadtest.counting.request_evidence import BATCHABLE_PER_S, EDGE_WINDOW, RequestProfile


class Clock:
    now = 1_000.0

    def __call__(self) -> float:
        return self.now


def profile() -> tuple[RequestProfile, Environment, Clock]:
    environment, clock = Environment(events=Events()), Clock()
    workload = RequestProfile.register(environment, clock)
    environment.events.test_start.fire(environment=environment)
    return workload, environment, clock


def fire(environment, request_type, name, exception=None, **context):
    environment.events.request.fire(
        request_type=request_type, name=name, response_time=1.0, response_length=0, exception=exception, context=context
    )


def test_query_density_is_returned_over_scanned_per_request_name():
    workload, env, _ = profile()
    for _ in range(10):
        fire(env, "query", "GET rare", partition="a", op_class="GET", entities=500, returned=5, estimated=True, reach="range")
        fire(env, "read", "GET point read", partition="a", op_class="GET", entities=1, select=True)
    fire(env, "query", "GET rare", RuntimeError("x"), partition="a", op_class="GET", entities=0, reach="range")
    names = {n["name"]: n for n in workload.figures()["names"]}
    rare = names["GET rare"]
    assert (rare["requests"], rare["failures"], rare["returned"], rare["scanned"], rare["estimated"]) == (11, 1, 50, 5000, 5000)
    assert rare["density"] == 0.01 and rare["reach"] == "range" and rare["op"] == "query"
    assert names["GET point read"]["density"] == 1.0 and names["GET point read"]["reach"] == "point"


def test_reads_without_select_and_writes_after_a_read_are_counted():
    workload, env, _ = profile()
    fire(env, "read", "GET point read", partition="a", op_class="GET", entities=1, select=False)
    fire(env, "read", "GET point read", partition="a", op_class="GET", entities=1, select=True)
    fire(env, "query", "GET mine", partition="a", op_class="GET", entities=1)  # an event without the field: not counted
    fire(env, "update", "PUT update merge", partition="a", op_class="PUT", entities=1, client="c1", after_read=True)
    names = {n["name"]: n for n in workload.figures()["names"]}
    assert names["GET point read"]["unprojected"] == 1 and names["GET mine"]["unprojected"] == 0
    assert names["PUT update merge"]["after_read"] == 1


def test_single_writes_are_batchable_when_one_client_sends_many_to_one_partition_in_a_second():
    workload, env, clock = profile()
    for _ in range(BATCHABLE_PER_S):
        fire(env, "upsert", "PUT upsert merge", partition="hot", op_class="PUT", entities=1, client="c1")
    for i in range(BATCHABLE_PER_S):  # as many, but from ten clients: no one client could have batched them
        fire(env, "upsert", "PUT upsert merge", partition="hot", op_class="PUT", entities=1, client=f"c{i + 2}")
    clock.now += 1
    for _ in range(BATCHABLE_PER_S - 1):  # the next second, one short
        fire(env, "upsert", "PUT upsert merge", partition="hot", op_class="PUT", entities=1, client="c1")
    fire(env, "batch", "PUT batch upsert", partition="hot", op_class="PUT", entities=100)  # no client: not a single write
    env.events.test_stop.fire(environment=env)
    figures = workload.figures()
    assert (figures["single_writes"], figures["batchable"]) == (3 * BATCHABLE_PER_S - 1, BATCHABLE_PER_S)


def write_keys(keys):
    workload, env, _ = profile()
    for key in keys:
        fire(env, "insert", "PUT insert", partition=key, op_class="PUT", entities=1, client="c")
    return workload.figures()


def test_increasing_keys_are_appended_decreasing_ones_prepended_spread_ones_neither():
    n = 4 * EDGE_WINDOW
    up = write_keys([f"{i:08d}" for i in range(n)])
    assert up["ordered"] == n - EDGE_WINDOW and up["appended"] == up["ordered"] and up["prepended"] == 0
    down = write_keys([f"{n - i:08d}" for i in range(n)])
    assert down["prepended"] == down["ordered"] and down["appended"] == 0
    spread = write_keys([f"{(i * 7919) % 16:03d}" for i in range(n)])  # 16 keys over and over (a hash prefix)
    assert spread["appended"] == spread["prepended"] == 0
    single = write_keys(["hot"] * n)
    assert single["appended"] == single["prepended"] == 0


def test_a_worker_drains_its_counts_and_the_master_adds_them():
    worker, env, _ = profile()
    master, _, _ = profile()
    fire(env, "query", "GET rare", partition="a", op_class="GET", entities=100, returned=1, estimated=True)
    master.merge(worker.drain())
    fire(env, "query", "GET rare", partition="a", op_class="GET", entities=100, returned=3, estimated=True)
    master.merge(worker.drain())
    master.merge(worker.drain())  # nothing new: nothing added
    rare = master.figures()["names"][0]
    assert (rare["requests"], rare["returned"], rare["scanned"], rare["density"]) == (2, 4, 200, 0.02)


@pytest.mark.parametrize("seed", range(4))
def test_keys_written_in_bulk_are_counted_as_one_at_a_time(seed):
    """A logged day's writes are counted as arrays, block after block: the same totals and edges as a write at a time,
    drifting keys (appended and prepended both) in blocks shorter and longer than the window."""
    rng = random.Random(seed)
    keys, level = [], 0
    for _ in range(rng.randint(1, 900)):
        level += rng.choice((-3, 1, 1, 2)) if rng.random() < 0.7 else 0
        keys.append(f"k{level + 5000 + rng.randint(-40, 40):05d}")
    one, bulk = RequestProfile(), RequestProfile()
    for key in keys:
        one.key_written(key)
    at = 0
    while at < len(keys):
        size = rng.choice((0, 1, 5, EDGE_WINDOW - 1, EDGE_WINDOW, 150))
        bulk.keys_written(keys[at : at + size])
        at += size
    assert bulk.totals == one.totals and one.totals["ordered"] == max(0, len(keys) - EDGE_WINDOW)
    assert (bulk._low, bulk._high, list(bulk._recent)) == (one._low, one._high, list(one._recent))
