"""A filter's key conditions, its kind, and the seeded rows it scans (pure: no service)."""

from __future__ import annotations

from collections import Counter

import pytest

from loadtest.counting.buckets import OTHER
from loadtest.workload.key_specs import key_strategy
from loadtest.workload.query_reach import reach_of


@pytest.mark.parametrize(
    "where,parameters,kind,partition,filtered",
    [
        (None, None, "table", None, False),
        ("n lt 1", None, "table", None, True),
        ("PartitionKey eq 'a'", None, "range", "a", False),
        ("PartitionKey eq @pk and n lt 1", {"pk": "a"}, "range", "a", True),
        ("(PartitionKey eq 'x' and RowKey eq 'y')", None, "point", "x", False),
        ("PartitionKey eq 'it''s' and (Status eq 'x' or Status eq 'y')", None, "range", "it's", True),
        ("PartitionKey ge 'a' and PartitionKey lt 'c'", None, "partitions", None, False),
        ("PartitionKey eq 'a' or PartitionKey eq 'b'", None, "table", None, True),  # an or seeks nothing
        ("not (PartitionKey eq 'a')", None, "table", None, True),
        ("PartitionKey ne 'a'", None, "table", None, True),
        ("PartitionKey eq @pk", {"pk": 7}, "table", None, True),  # a number never matches a key
        ("Price gt 10.5 and PartitionKey eq 'p' and RowKey ge '1' and RowKey lt '5'", None, "range", "p", True),
    ],
)
def test_the_key_conditions_of_a_filter_decide_its_kind(where, parameters, kind, partition, filtered):
    reach = reach_of(where, parameters)
    assert (reach.kind, reach.partition, reach.filtered) == (kind, partition, filtered)


def test_a_rowkey_range_is_kept_with_its_bounds():
    reach = reach_of("PartitionKey eq 'a' and RowKey gt @lo and RowKey le @hi", {"lo": "0010", "hi": "0020"})
    assert reach.rk == ("0010", False, "0020", True)


@pytest.mark.parametrize(
    "where,message",
    [
        ("PartitionKey eq @pk", "parameter @pk is not in parameters"),
        ("PartitionKey eq 'a", "cannot read"),
        ("(PartitionKey eq 'a'", "unbalanced parentheses"),
        ("PartitionKey eq 'a')", "unbalanced parentheses"),
    ],
)
def test_a_filter_it_cannot_read_is_refused_with_what_is_wrong(where, message):
    with pytest.raises(ValueError, match=message):
        reach_of(where, {})


def test_rows_known_follow_the_seeding_per_partition_and_rowkey_range():
    keys = key_strategy("set:4", seed=1)  # 1,000 seeded rows: 250 under each key, RowKeys 0 .. 249
    pk = keys.keys()[1]
    assert reach_of(f"PartitionKey eq '{pk}' and n lt 1").known_by_partition(keys, 1000) == {pk: 250}
    ranged = reach_of(
        f"PartitionKey eq '{pk}' and RowKey ge @lo and RowKey lt @hi and n lt 1", {"lo": keys.row(10), "hi": keys.row(30)}
    )
    assert ranged.known_by_partition(keys, 1000) == {pk: 20}
    inclusive = reach_of(f"PartitionKey eq '{pk}' and RowKey gt @lo and RowKey le @hi", {"lo": keys.row(10), "hi": keys.row(30)})
    assert inclusive.known_by_partition(keys, 1000) == {pk: 20}
    assert reach_of(f"PartitionKey eq '{pk}' and RowKey ge 'zzz'").known_by_partition(keys, 1000) == {pk: 0}
    assert sum(reach_of("n lt 1").known_by_partition(keys, 1000).values()) == 1000
    low, high = keys.keys()[1], keys.keys()[3]
    assert reach_of(f"PartitionKey ge '{low}' and PartitionKey lt '{high}'").known_by_partition(keys, 1000) == {
        keys.keys()[1]: 250,
        keys.keys()[2]: 250,
    }
    assert reach_of("PartitionKey eq 'unknown' and n lt 1").known_by_partition(keys, 1000) == {"unknown": 0}


def test_per_entity_keys_count_the_whole_table_when_the_range_spans_partitions():
    keys = key_strategy("guid", seed=1)
    assert reach_of("PartitionKey ge 'a' and n lt 1").known_by_partition(keys, 500) == {OTHER: 500}


def test_an_answer_counts_rows_scanned_where_they_were_and_marks_estimates():
    keys = key_strategy("set:4", seed=1)
    k0, k1 = keys.keys()[:2]
    seek = reach_of(f"PartitionKey eq '{k0}'").counted(Counter({k0: 30}), keys, 1000, cut_short=False)
    assert seek == {"returned": 30, "reach": "range", "entities": 30}  # a seek scans what it returns
    filtered = reach_of(f"PartitionKey eq '{k0}' and n lt 1").counted(Counter({k0: 3}), keys, 1000, cut_short=False)
    assert filtered == {"returned": 3, "reach": "range", "entities": 250, "estimated": True}
    cut = reach_of(f"PartitionKey eq '{k0}' and n lt 1").counted(Counter({k0: 10}), keys, 1000, cut_short=True)
    assert cut["entities"] == 10 and "estimated" not in cut
    table = reach_of("n lt 1").counted(Counter({k1: 2, k0: 1}), keys, 1000, cut_short=False)
    assert table["partition"] == k0 and table["entities"] == 1000 and table["partitions"][k1] == 250
    unfiltered = reach_of(None).counted(Counter({k1: 2, k0: 1}), keys, 1000, cut_short=False)
    assert unfiltered["partitions"] == {k1: 2, k0: 1} and unfiltered["entities"] == 3


def test_the_key_range_a_filter_seeks_is_written_back_as_a_filter_on_keys_alone():
    """What the emulator lists to count a filtered query's rows scanned: inside one partition its RowKey bounds too,
    across partitions its PartitionKey bounds (each partition is scanned whole), nothing for the whole table."""
    inside = reach_of("PartitionKey eq 'it''s' and RowKey gt @lo and RowKey le '9' and (n lt 5 or n gt 90)", {"lo": "1"})
    assert inside.key_filter() == "PartitionKey eq 'it''s' and RowKey gt '1' and RowKey le '9'"
    across = reach_of("PartitionKey ge 'a' and PartitionKey lt 'c' and RowKey eq 'x' and n lt 5")
    assert across.key_filter() == "PartitionKey ge 'a' and PartitionKey lt 'c'"
    assert reach_of("n lt 5").key_filter() == "" and reach_of(inside.key_filter()).pk == inside.pk
