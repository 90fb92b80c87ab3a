"""The engines' buckets added column by column: the same sum, folding and key ranges as adding ``Bucket`` objects
and folding them afterwards, as the summary does."""

from __future__ import annotations

import random
from collections import Counter

import pandas as pd
import pyarrow as pa
import pytest

from loadtest.counting import bucket_frame
from loadtest.counting.buckets import COUNTERS, OTHER, UNATTRIBUTED, Bucket
from loadtest.engines.bucket_sum import BucketSum


def engine_frame(rng: random.Random, seconds: range, partitions: list[str]) -> pd.DataFrame:
    """One engine's buckets: random counts (``rows`` negative at times: deletes), rare errors and throttling."""
    rows = []
    for second in seconds:
        for partition in rng.sample(partitions, k=rng.randint(1, len(partitions))):
            for op_class in rng.sample(["GET", "PUT"], k=rng.randint(1, 2)):
                bucket = Bucket(**{name: rng.randint(0, 50) for name in COUNTERS})
                bucket.rows = rng.randint(-5, 5)
                bucket.longest_ms = rng.randint(0, 3000)
                if rng.random() < 0.1:
                    bucket.errors.update({rng.choice(["ServerBusy", "OperationTimedOut"]): rng.randint(1, 3)})
                    bucket.throttled_by.update({"partition": rng.randint(1, 3)})
                rows.append(((second, partition, op_class), bucket))
    return bucket_frame.frame_of(rows)


def reference(frames: list[pd.DataFrame], keep: set[str]) -> tuple[pd.DataFrame, Counter]:
    """Every engine's buckets summed as objects, then the partitions outside ``keep`` folded: what ``summary.counted``
    does with a run's own buckets."""
    added: dict = {}
    ranges: Counter = Counter()
    for frame in frames:
        for (second, partition, op_class), bucket in bucket_frame.to_buckets(frame).items():
            if partition not in keep | {OTHER, UNATTRIBUTED}:
                ranges[(second, partition[:1])] += bucket.entities
                partition = OTHER
            added.setdefault((second, partition, op_class), Bucket()).add(bucket)
    return bucket_frame.summed(bucket_frame.frame_of(sorted(added.items()))), +ranges


@pytest.mark.parametrize("seed", range(5))
def test_the_sum_is_the_buckets_added_and_folded(seed):
    rng = random.Random(seed)
    partitions = [f"{c}{i}" for c in "abk" for i in range(4)] + [OTHER, UNATTRIBUTED]
    frames = [engine_frame(rng, range(100 + e, 110 + e), partitions) for e in range(4)]
    keep = set(rng.sample(partitions[:-2], k=5))
    sums = BucketSum(keep, 100, 112)
    for frame in frames:
        sums.add(frame)
    want, ranges = reference(frames, keep)
    got = sums.frame()
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert +sums.ranges == ranges and ranges  # some partitions were folded, and by their key ranges


def test_categorical_columns_read_from_parquet_add_as_text_does():
    rng = random.Random(7)
    frame = engine_frame(rng, range(5), ["p1", "p2", "q1"])
    as_text, as_read = BucketSum({"p1"}, 0, 4), BucketSum({"p1"}, 0, 4)
    as_text.add(frame)
    read = bucket_frame.read_table(bucket_frame.encode(frame))
    assert pa.types.is_dictionary(read.schema.field("partition").type)
    as_read.add(read)
    pd.testing.assert_frame_equal(as_text.frame(), as_read.frame())
    assert as_text.ranges == as_read.ranges


def test_seconds_outside_the_clocks_grow_the_sum():
    """A bucket before the first engine's start or after the last one's stop (a late report) is kept, not lost."""
    rng = random.Random(3)
    early, late = engine_frame(rng, range(90, 93), ["k"]), engine_frame(rng, range(118, 121), ["k"])
    tallied = early.iloc[0:1].assign(errors='{"ServerBusy":2}')
    sums = BucketSum({"k"}, 100, 110)
    sums.add(late)
    sums.add(tallied)
    sums.add(early)
    want, _ = reference([late, tallied, early], {"k"})
    pd.testing.assert_frame_equal(sums.frame(), want, check_dtype=False)
    assert sums.frame()["second"].agg(["min", "max"]).tolist() == [90, 120]


def test_an_op_class_of_no_kind_is_named():
    frame = bucket_frame.frame_of([((1, "k", "SCAN"), Bucket(requests=1))])
    with pytest.raises(ValueError, match="op class 'SCAN': not one of GET, PUT, ALL"):
        BucketSum({"k"}, 0, 2).add(frame)
