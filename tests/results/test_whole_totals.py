"""A named key's rows made whole from its folded counts, the other partitions' rows less by as much
(``results.whole_totals``)."""

from __future__ import annotations

from loadtest.counting.buckets import OTHER, Bucket
from loadtest.counting.folded_totals import FoldedTotals
from loadtest.results.rows import PartitionRow
from loadtest.results.whole_totals import made_whole
from loadtest.service.operations import OpClass


def row(partition: str, op_class: OpClass, requests: int, peak: float = 10.0) -> PartitionRow:
    return PartitionRow(
        partition=partition, op_class=op_class, requests=requests, entities=requests, attempts=requests,
        mean_eps=peak / 2, peak_eps=peak, target=100, ratio=peak / 100,
    )  # fmt: skip


def test_a_keys_folded_counts_join_its_rows_leave_the_others_and_a_class_that_always_folded_gets_its_rows():
    folded = FoldedTotals()
    folded.add("k", "GET", Bucket(requests=4, entities=4, attempts=6, throttled=2, errors={"ServerBusy": 1}), frozenset)
    folded.add("k", "PUT", Bucket(requests=3, entities=3, attempts=3), frozenset)  # no PUT second of it kept apart
    folded.add("light", "GET", Bucket(requests=9, entities=9, attempts=9), frozenset)  # not named: stays in OTHER
    rows = [row("k", OpClass.GET, 10), row(OTHER, OpClass.GET, 20), row(OTHER, OpClass.PUT, 5)]
    whole = {(r.partition, r.op_class): r for r in made_whole(rows, folded, ["k"], target=100)}
    get, put, both = whole[("k", OpClass.GET)], whole[("k", OpClass.PUT)], whole[("k", OpClass.ALL)]
    assert (get.requests, get.attempts, get.throttled, get.errors) == (14, 16, 2, {"ServerBusy": 1})
    assert get.peak_eps == 10.0  # its seconds' figures as they were: the row says partial where the count does
    assert (put.requests, put.peak_eps) == (3, 0.0) and (both.requests, both.entities) == (17, 17)
    assert whole[(OTHER, OpClass.GET)].requests == 16 and whole[(OTHER, OpClass.PUT)].requests == 2
    assert ("light", OpClass.GET) not in whole


def test_a_heavy_key_kept_apart_in_no_second_is_named_with_its_whole_count():
    folded = FoldedTotals()
    folded.add("heavy", "GET", Bucket(requests=40, entities=40, attempts=40), frozenset)
    rows = [row(OTHER, OpClass.GET, 50)]
    whole = {(r.partition, r.op_class): r for r in made_whole(rows, folded, ["heavy"], target=100)}
    assert whole[("heavy", OpClass.GET)].requests == 40 and whole[(OTHER, OpClass.GET)].requests == 10
