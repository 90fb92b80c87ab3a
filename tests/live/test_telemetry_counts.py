"""What the OpenTelemetry instruments read, in process: the folded seconds' totals only grow and end as the run's
whole count, and the partitions' labels stay bounded (``telemetry``, ``RunCounts.final_totals``)."""

from __future__ import annotations

from types import SimpleNamespace

from synthetic import fire, listener

from loadtest.counting.counts import AGED_AFTER_S, COMPACT_AFTER_S
from loadtest.live.telemetry import MAX_PARTITIONS, OTHER_LABEL, PartitionTelemetry


def test_the_folded_seconds_totals_only_grow_and_end_as_every_second_counted():
    """Three partitions for longer than the buckets are kept (some seconds put away as columns): each second's
    totals never fall, lag the newest second by the fold, and once every second is folded equal what was fired."""
    clock, env, metrics = listener()
    seconds = AGED_AFTER_S + 30
    fired: dict[tuple[str, str], int] = {}
    last: dict[tuple[str, str], int] = {}
    for t in range(seconds):
        clock.now = metrics.started + t + 0.5
        for i, partition in enumerate(("hot", "warm", "cool")):
            fire(env, partition=partition, entities=3 - i)
            fire(env, op="upsert", op_class="PUT", partition=partition)
            fired[(partition, "GET")] = fired.get((partition, "GET"), 0) + 3 - i
            fired[(partition, "PUT")] = fired.get((partition, "PUT"), 0) + 1
        metrics.compact(clock.now)
        totals = {key: bucket.entities for key, bucket in metrics.final_totals().items()}
        assert all(totals[key] >= value for key, value in last.items()), t
        if t > COMPACT_AFTER_S + 1:
            assert 0 < totals[("hot", "GET")] < fired[("hot", "GET")]  # folded seconds only: behind the newest
        last = totals
    assert metrics.aged_totals  # seconds were put away: their counts come from there
    metrics.compact(clock.now + COMPACT_AFTER_S + 2)
    final = metrics.final_totals()
    assert {key: bucket.entities for key, bucket in final.items()} == fired
    assert final[("hot", "GET")].requests == seconds


def test_past_the_cap_partitions_share_one_label_and_keep_theirs_once_given():
    telemetry = PartitionTelemetry(SimpleNamespace())
    labels = [telemetry._label(f"p{i}") for i in range(MAX_PARTITIONS + 10)]  # noqa: SLF001
    assert labels[:MAX_PARTITIONS] == [f"p{i}" for i in range(MAX_PARTITIONS)]
    assert set(labels[MAX_PARTITIONS:]) == {OTHER_LABEL}
    assert telemetry._label("p3") == "p3" and telemetry._label("#other") == OTHER_LABEL  # noqa: SLF001
