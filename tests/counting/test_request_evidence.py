"""The request profile counts what the checklist asks about, from synthetic request events."""

from __future__ import annotations

from locust.env import Environment
from locust.event import Events

from loadtest.counting.request_evidence import BATCHABLE_PER_S, RequestProfile


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
