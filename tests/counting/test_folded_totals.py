"""Each key's folded counts: summed as its seconds fold (late reports too), bounded in keys, handed over in a snapshot
that says which keys it could not list, and added by a merge (``counting.folded_totals``)."""

from __future__ import annotations

from synthetic import recorded

from loadtest.counting.buckets import OTHER, Bucket
from loadtest.counting.counts import TOP_K
from loadtest.counting.folded_totals import FoldedTotals

START = 1_000_000.0


def bucket(requests: int) -> Bucket:
    return Bucket(requests=requests, entities=requests, attempts=requests)


def test_a_snapshot_lists_the_keys_that_folded_most_and_a_merge_knows_the_rest_are_not_whole(monkeypatch):
    monkeypatch.setattr("loadtest.counting.folded_totals.KEYS_LISTED", 3)
    part = FoldedTotals()
    for i in range(6):
        part.add(f"k{i}", "GET", bucket(10 * (i + 1)), frozenset)
    snapshot = part.snapshot(kept=frozenset({"top", "k0"}))
    assert [row[0] for row in snapshot["rows"]] == ["k3", "k4", "k5"]  # the three heaviest
    merged = FoldedTotals()
    merged.merge(snapshot, frozenset)
    assert merged.of("k5", "GET").requests == 60 and merged.exact("k5") and merged.exact("top")
    assert not merged.exact("k0") and not merged.exact("k1") and merged.partial("k1")  # folded there, unlisted


def test_past_the_keys_it_totals_only_those_kept_apart_then_are_still_totalled(monkeypatch):
    monkeypatch.setattr("loadtest.counting.folded_totals.KEYS_TOTALLED", 2)
    totals = FoldedTotals()
    for key in ("a", "b", "c", "hot"):
        totals.add(key, "PUT", bucket(1), lambda: frozenset({"hot"}))
    assert totals.partitions == {"a", "b", "hot"} and totals.of("c", "PUT") is None
    assert totals.exact("a") and totals.exact("hot") and not totals.exact("c") and not totals.exact("never-seen")


def test_a_late_report_of_a_key_not_kept_apart_is_folded_into_the_other_partitions_and_its_totals():
    second = [{"partition": f"k{i:02d}", "entities": 5 if i < TOP_K else 1} for i in range(TOP_K + 5)]
    metrics = recorded({t: second for t in range(12)}, start=START, compact=True)
    before = metrics.folded.of("k54", "GET").requests
    metrics.bucket(int(START) + 1, "k54", "GET").requests += 2  # a record read late, for a second compacted long ago
    frame = metrics.frame()
    assert metrics.folded.of("k54", "GET").requests == before + 2 and metrics.partial("k54")
    second = frame[frame["second"] == int(START) + 1]
    assert second[second["partition"] == OTHER]["requests"].sum() >= 7  # the second's five light keys and the late two
    assert "k54" not in set(second["partition"])
