"""Buckets put away as columns as a run ages: the results are the ones the same run gives with every bucket an
object, the listener holds no more than the recent window's, and a late report for a second put away still counts."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import run_info
from synthetic import fire, listener

import loadtest.counting.aged_buckets
import loadtest.counting.counts
from loadtest.counting.bucket_frame import decode, encode, frame_of, summed, to_buckets
from loadtest.counting.buckets import Bucket
from loadtest.results.series_frame import records
from loadtest.results.summary import build

START = 1_000_000
SECONDS = 1_500


def long_run(monkeypatch: pytest.MonkeyPatch, *, aged_after_s: int):
    """1,500 seconds over 60 keys (more than the top kept apart, so some fold), failures and throttling among them,
    compacted each second as a run is; a late report lands for a second long put away."""
    monkeypatch.setattr(loadtest.counting.counts, "AGED_AFTER_S", aged_after_s)
    monkeypatch.setattr(loadtest.counting.aged_buckets, "CHUNK_ROWS", 2_000)  # several chunks
    clock, env, metrics = listener(START)
    for second in range(SECONDS):
        clock.now = START + second + 0.5
        for i in range(6):
            key = f"k{(second * 7 + i * 13) % 60:02d}"
            fire(env, partition=key, op_class="GET" if i % 2 else "PUT", entities=1 + i, ms=2.0 + i)
        if second % 97 == 0:
            fire(env, partition="k01", error="ServerBusy", throttled=2, attempts=3)
        metrics.compact()
    fire(env, partition="k02", entities=5)  # the clock's now...
    metrics.merge(late_report(second=START + 10))  # ...and a worker's report for second 10, put away long ago
    metrics.steady_from, metrics.stopped = START + 1.0, START + SECONDS
    return metrics


def late_report(second: int) -> dict:
    _, env, worker = listener(START)
    worker.clock.now = second + 0.5
    fire(env, partition="k03", entities=40, error="OperationTimedOut")
    return worker.drain()


def test_a_long_run_gives_the_same_results_put_away_or_not(monkeypatch):
    kept = long_run(monkeypatch, aged_after_s=10**9)
    put_away = long_run(monkeypatch, aged_after_s=600)
    assert kept.aged.rows == 0
    assert put_away.aged.rows > 2 * 2_000 and put_away.aged.encoded_bytes > 0
    # the recent window's buckets, not the run's: 600 seconds of at most 6 (+1) keys a second, and the late one
    assert len(put_away.buckets) <= 610 * 7 + 1 < len(kept.buckets) / 2
    one, other = build(kept, run_info()), build(put_away, run_info())
    assert one.to_json() == other.to_json()
    assert records(one.timeseries) == records(other.timeseries)  # the series, in its file beside results.json
    series = other.timeseries
    assert sum(r.entities for r in other.rows("GET")) == series.loc[series["op_class"] == "GET", "entities"].sum()
    assert other.errors == {"ServerBusy": 16, "OperationTimedOut": 1}


def test_a_snapshot_carries_the_buckets_put_away(monkeypatch):
    metrics = long_run(monkeypatch, aged_after_s=600)
    snapshot = metrics.snapshot()
    assert sum(b["entities"] for *_, b in snapshot["buckets"]) == int(metrics.frame()["entities"].sum())


def test_the_columns_hold_every_counter_and_tally_and_add_a_key_seen_twice():
    a = Bucket(requests=2, entities=7, longest_ms=30, unsent=3)
    a.errors.update({"ServerBusy": 2})
    a.throttled_by.update({"partition": 4})
    b = Bucket(requests=1, entities=1, longest_ms=90)
    b.errors.update({"ServerBusy": 1, "Timeout": 1})
    frame = decode(encode(frame_of([((5, "p", "GET"), a), ((5, "p", "GET"), b), ((4, "q", "PUT"), Bucket(rows=1))])))
    assert to_buckets(frame_of([((5, "p", "GET"), a)])) == {(5, "p", "GET"): a}
    (first, second) = summed(frame).itertuples(index=False)
    assert (first.second, first.partition, first.rows) == (4, "q", 1)
    merged = to_buckets(pd.DataFrame([second._asdict()]))[(5, "p", "GET")]
    assert (merged.requests, merged.entities, merged.unsent, merged.longest_ms) == (3, 8, 3, 90)
    assert (dict(merged.errors), dict(merged.throttled_by)) == ({"ServerBusy": 3, "Timeout": 1}, {"partition": 4})
