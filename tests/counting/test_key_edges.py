"""The ends of the key order, counted a second at a time from the buckets before untracked keys fold: a key design
whose new keys keep landing at an end has that range counted as one, however many keys came and went in it."""

from __future__ import annotations

from loadtest.counting.counts import COMPACT_AFTER_S, RunCounts
from loadtest.counting.key_edges import KeyEdges
from loadtest.service.key_ends import SETTLE_S


def _second(counts: RunCounts, second: int, load: dict[str, int], op_class: str = "PUT") -> None:
    for key, n in load.items():
        bucket = counts.bucket(second, key, op_class)
        bucket.requests += n
        bucket.offered += n
        bucket.entities += n


def test_a_key_a_second_is_one_range_of_its_seconds_whole_load_after_the_others_fold():
    """150 writes a second to that second's key, 3 a second to 100 steady keys: the newest range takes each second's
    150 however many keys the counts fold into the other partitions."""
    counts = RunCounts()
    for second in range(60):
        _second(counts, second, {f"2026{second:04d}": 150, **{f"cust-{i:03d}": 3 for i in range(100)}})
        counts.compact(now=second)
    edges = counts.edges_now()
    # the customers sort after the digits: the end is theirs, so the new keys are not at it; the start is theirs too
    assert edges.ends["append"].moves == 0
    stamped = RunCounts()
    for second in range(60):
        _second(stamped, second, {f"2026{second:04d}": 150, **{f"0-cust-{i:03d}": 3 for i in range(100)}})
        stamped.compact(now=second)
    edges = stamped.edges_now()
    seconds, asked, served, throttled = edges.series("append")
    assert list(seconds) == list(range(1, 60)) and set(asked) == {150.0}  # the newest range, every second whole
    assert edges.ends["append"].moves == 60 - SETTLE_S
    assert edges.ends["append"].puts == 150 * 59 and edges.puts == 60 * 450


def test_the_seconds_not_yet_compacted_are_read_at_the_end_and_the_counts_stay_as_they_were():
    counts = RunCounts()
    for second in range(30):
        _second(counts, second, {f"k{second:03d}": 10})
    counts.compact(now=29)
    before = counts.edges.last
    assert before == 29 - COMPACT_AFTER_S - 1
    assert counts.edges_now().last == 29 and counts.edges.last == before


def test_an_engines_ends_add_second_by_second():
    one, two = KeyEdges(), KeyEdges()
    for edges in (one, two):
        for second in range(20):
            edges.add_second(second, [f"k{second:03d}"], [5.0], [4.0], [1.0], [5.0])
    one.merge(two.snapshot())
    seconds, asked, served, throttled = one.series("append")
    assert set(asked[1:]) == {10.0} and set(served[1:]) == {8.0} and one.puts == 200
    assert one.ends["append"].moves == two.ends["append"].moves == 20 - SETTLE_S


def test_a_fixed_key_set_hot_at_its_largest_key_has_no_moving_end():
    edges = KeyEdges()
    for second in range(60):
        edges.add_second(second, ["a", "b", "hot"], [1.0, 1.0, 80.0], [1.0, 1.0, 80.0], [0.0] * 3, [1.0, 1.0, 80.0])
    assert edges.ends["append"].moves == 0 and edges.ends["append"].puts == 80 * 59  # its end, never moving


def test_a_late_second_is_left_out_not_misplaced():
    edges = KeyEdges()
    edges.add_second(5, ["b"], [1.0], [1.0], [0.0], [1.0])
    edges.add_second(4, ["z"], [1.0], [1.0], [0.0], [1.0])
    assert edges.ends["append"].key == "b"
