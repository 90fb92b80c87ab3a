"""A run's counts: a worker's handed to the master exactly once, many keys folded into OTHER with planted hot keys
exact, the sketches merged."""

from collections import defaultdict

import pytest
from synthetic import Clock, environment, fire, listener

from loadtest.counting.buckets import OTHER
from loadtest.counting.counts import AGED_AFTER_S, COMPACT_AFTER_S, TOP_K
from loadtest.counting.request_listener import PartitionMetrics


def test_worker_buckets_merge_on_the_master_exactly_once():
    clock = Clock()
    envs = [environment(), environment()]
    workers = [PartitionMetrics.register(e, clock=clock) for e in envs]
    master = PartitionMetrics.register(environment(), clock=clock)
    for n, env in enumerate(envs, start=1):
        for _ in range(n * 10):
            fire(env, op="insert", op_class="PUT", entities=1, ms=2.0 * n)
    for worker in workers:
        master.merge(worker.drain())
        # a second report carries nothing already sent
        again = worker.drain()
        assert again["buckets"] == [] and again["latency"] == []
    (bucket,) = master.buckets.values()
    assert (bucket.requests, bucket.entities) == (30, 30)
    (hist,) = master.latency.seconds.values()
    assert hist.get_total_count() == 30


def test_many_keys_fold_into_other_and_planted_hot_keys_stay_exact():
    clock, env, metrics = listener()
    for second in range(20):
        clock.now = 1_000_000 + second + 0.5
        for i in range(500):  # 10,000 distinct cold keys, 1 entity each
            fire(env, partition=f"cold{second * 500 + i}", entities=1)
        fire(env, partition="hot-a", entities=300)
        fire(env, partition="hot-b", op="upsert", op_class="PUT", entities=200)
        metrics.compact()
    partitions = {key[1] for key in metrics.buckets}
    assert len(partitions) < 60 * 20 // 20 + 500 * 6  # folded: old seconds keep only top keys and OTHER
    assert {"hot-a", "hot-b", OTHER} <= partitions
    metrics.compact(now=clock.now + 100)
    apart = defaultdict(set)  # each second keeps apart at most the top keys of the moment it aged
    for second, partition, _ in metrics.buckets:
        apart[second].add(partition)
    assert all(len(partitions - {OTHER}) <= TOP_K for partitions in apart.values()) and len(apart) == 20
    exact = lambda p: sum(b.entities for (_, q, _), b in metrics.buckets.items() if q == p)  # noqa: E731
    assert (exact("hot-a"), exact("hot-b")) == (300 * 20, 200 * 20)
    assert sum(b.entities for b in metrics.buckets.values()) == 10_000 + 500 * 20
    assert metrics.distinct_partitions() == pytest.approx(10_002, rel=0.05)
    assert metrics.top_partitions(2) == ["hot-a", "hot-b"]


def test_worker_sketches_merge_on_the_master():
    clock = Clock()
    worker_env = environment()
    worker = PartitionMetrics.register(worker_env, clock=clock)
    master = PartitionMetrics.register(environment(), clock=clock)
    for round_ in range(3):
        for i in range(100):
            fire(worker_env, partition=f"k{round_}-{i}")
        fire(worker_env, partition="hot", entities=1000)
        master.merge(worker.drain())
    assert master.top_partitions(1) == ["hot"]
    assert master.distinct_partitions() == pytest.approx(301, rel=0.05)


def test_compact_reads_only_the_buckets_made_since_it_last_looked():
    """Its work each second stays that of the last few seconds however long the run: it once walked every bucket of
    the run each second (a soak's second hour took 3.5 times its first in bench/soak_memory.py)."""
    clock, env, metrics = listener()
    for second in range(600):
        clock.now = 1_000_000 + second + 0.5
        for key in range(20):
            fire(env, partition=f"k{key}")
        metrics.compact()
        assert len(metrics._fresh) <= (COMPACT_AFTER_S + 1) * 20
    held = len(metrics.buckets)
    assert held <= (AGED_AFTER_S + 2) * 20 and held + metrics.aged.rows == 600 * 20  # the rest put away, none lost
    assert int(metrics.frame()["requests"].sum()) == 600 * 20


def test_letting_go_of_the_history_drops_the_histograms_and_put_away_columns_and_leaves_the_live_view_as_it_was():
    """What a stopped test's results were built from goes once they are (the report draws without it beside it); the
    web UI still shows the stopped test as it did."""
    from loadtest.live.partitions_tab import live_view

    clock, env, metrics = listener()
    for second in range(300):
        clock.now = 1_000_000 + second + 0.5
        for key in range(5):
            fire(env, partition=f"k{key}", entities=1 + key, ms=2.0)
        metrics.compact()
    env.events.test_stop.fire(environment=env)
    shown = live_view(metrics, target=3, now=clock.now + 5)
    assert metrics.aged.rows and metrics.latency.by_op_class()
    metrics.let_go_of_history()
    assert not metrics.aged.rows and not metrics.latency.by_op_class() and not metrics.corrected.by_op_class()
    assert live_view(metrics, target=3, now=clock.now + 5) == shown and shown["rows"]


def test_a_key_counted_apart_only_once_it_was_among_the_hottest_is_partial_and_one_hot_from_the_start_is_not():
    """The one-answer sweep's find: a run of 189 keys named the same 50 as its request log, with 221 requests where the
    logs said 244 — keys that joined the top late had their first seconds folded into the other partitions, unmarked."""
    clock, env, metrics = listener()
    for second in range(30):
        clock.now = 1_000_000 + second + 0.5
        for i in range(TOP_K + 20):  # more keys than are kept apart: the coldest of each aged second fold
            fire(env, partition=f"cold{i:03d}", entities=1)
        fire(env, partition="hot-early", entities=50)
        if second >= 15:
            fire(env, partition="late", entities=500)  # one of the hottest from its 15th second on
        elif second == 2:
            fire(env, partition="late", entities=1)  # once, early: folded as it aged
        metrics.compact()
    metrics.compact(now=clock.now + 100)
    assert metrics.partial("late") and not metrics.partial("hot-early") and not metrics.partial(OTHER)
    folded = metrics.snapshot(buckets=False)["folded_totals"]["rows"]  # what a merge of engines reads: its folded count
    assert [counts["entities"] for key, _, counts in folded if key == "late"] == [1]
    merged = PartitionMetrics.register(environment(), clock=clock)
    merged.merge({**metrics.snapshot(), "buckets": []})
    assert merged.partial("late") and not merged.partial("hot-early")


def test_past_the_keys_it_remembers_a_key_named_later_is_partial_and_those_kept_apart_then_stay_exact(monkeypatch):
    monkeypatch.setattr("loadtest.counting.folded_totals.KEYS_TOTALLED", 100)
    clock, env, metrics = listener()
    for second in range(20):
        clock.now = 1_000_000 + second + 0.5
        for i in range(60):
            fire(env, partition=f"cold{second}-{i}", entities=1)  # 1,200 keys, each folded
        fire(env, partition="hot", entities=500)
        metrics.compact()
    assert len(metrics.folded.partitions) <= 100 + 60 * 2 and not metrics.partial("hot")
    assert metrics.partial("cold19-0") and metrics.partial("never-seen-but-named")
