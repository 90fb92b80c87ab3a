import pytest
from synthetic import environment

from loadtest.account.endpoint import resolve_target
from loadtest.counting.request_listener import PartitionMetrics
from loadtest.emulator.budgets import Budgets
from loadtest.service.entities import EntityShape, filtered_value
from loadtest.service.operations import OPERATIONS
from loadtest.service.retry import parse_retry
from loadtest.session.table_session import TableSession
from loadtest.testbed.table import TestTable
from loadtest.workload.key_specs import key_strategy
from loadtest.workload.keys import row_key

SHAPE = EntityShape.for_size(1024)


def recorder(target, table, **known):
    env = environment()
    events = []
    env.events.request.add_listener(lambda **kw: events.append(kw))
    metrics = PartitionMetrics.register(env)
    ops = TableSession(target=target, table=table.name, request_event=env.events.request, **known)
    return ops, events, metrics


def test_a_batch_of_n_is_counted_as_n_entities(target, table):
    ops, events, metrics = recorder(target, table)
    ops.batch([("upsert", SHAPE.entity("hot", f"b{i:03d}")) for i in range(37)])
    (event,) = events
    assert event["request_type"] == "batch" and event["exception"] is None
    assert event["context"]["entities"] == 37 and event["context"]["op_class"] == "PUT"
    assert sum(b.entities for b in metrics.buckets.values()) == 37
    assert table.count("hot") == 37


def test_a_row_range_scan_counts_the_entities_it_returned(target, table):
    table.seed(key_strategy("single"), 50, SHAPE, progress=False)
    ops, events, _ = recorder(target, table)
    ops.scan("hot", row_key(10), row_key(30), page_size=7)  # three continuation tokens followed
    (event,) = events
    assert event["context"]["entities"] == 20 and event["context"]["op_class"] == "GET"
    assert event["context"]["attempts"] == 1  # three pages, no retry


def test_each_operation_fires_one_event_with_context_and_a_low_cardinality_name(target, table):
    table.seed(key_strategy("single"), 5, SHAPE, progress=False)
    ops, events, _ = recorder(target, table)
    ops.read("hot", row_key(1))
    ops.insert(SHAPE.entity("hot", "new1"))
    ops.upsert(SHAPE.entity("hot", row_key(2)))
    ops.replace(SHAPE.entity("hot", row_key(3)))
    ops.update(SHAPE.entity("hot", row_key(4)))
    ops.delete("hot", "new1")
    assert [e["request_type"] for e in events] == ["read", "insert", "upsert", "replace", "update", "delete"]
    for event in events:
        assert event["exception"] is None, event
        assert event["name"] == OPERATIONS[event["request_type"]].request_name and "hot" not in event["name"]
        assert event["context"]["partition"] == "hot"
        assert event["context"]["attempts"] == 1 and event["context"]["throttled"] == 0
    assert table.count("hot") == 5


def test_failures_are_classified_by_the_service_error_code(target, table):
    ops, events, metrics = recorder(target, table)
    ops.read("hot", "missing")
    ops.insert(SHAPE.entity("hot", "dup"))
    ops.insert(SHAPE.entity("hot", "dup"))
    codes = [e["context"].get("error_code") for e in events]
    assert codes == ["ResourceNotFound", None, "EntityAlreadyExists"]
    assert events[0]["exception"].code == "ResourceNotFound" and events[0]["exception"].status == 404
    errors = sum((b.errors for b in metrics.buckets.values()), start=__import__("collections").Counter())
    assert errors == {"ResourceNotFound": 1, "EntityAlreadyExists": 1}


def test_a_mixed_batch_is_counted_operation_by_operation(target, table):
    table.seed(key_strategy("single"), 10, SHAPE, progress=False)
    ops, events, metrics = recorder(target, table)
    ops.insert(SHAPE.entity("hot", "old1"))
    ops.insert(SHAPE.entity("hot", "old2"))
    batch = [
        ("insert", SHAPE.entity("hot", "new1")),
        ("upsert", SHAPE.entity("hot", "new2")),
        ("replace", SHAPE.entity("hot", row_key(1))),
        ("update", SHAPE.entity("hot", row_key(2), n=77)),
        ("delete", {"PartitionKey": "hot", "RowKey": "old1"}),
        ("delete", {"PartitionKey": "hot", "RowKey": "old2"}),
    ]
    ops.batch(batch)
    event = events[-1]
    assert event["exception"] is None, event
    assert event["context"]["entities"] == 6
    assert event["context"]["operations"] == {"insert": 1, "upsert": 1, "replace": 1, "update": 1, "delete": 2}
    assert sum(b.entities for (_, _, c), b in metrics.buckets.items() if c == "PUT") == 2 + 6
    assert table.count("hot") == 10 + 2  # +2 new, the two inserted before are deleted
    assert target.table(table.name).get_entity("hot", row_key(2))["n"] == 77


def test_a_batch_the_service_would_refuse_is_refused_before_sending(target, table):
    from loadtest.exit_codes import UsageError

    ops, events, _ = recorder(target, table)
    for bad, rule in [
        ([("upsert", SHAPE.entity("hot", f"r{i}")) for i in range(101)], "1 to 100"),
        ([("upsert", SHAPE.entity("a", "1")), ("upsert", SHAPE.entity("b", "2"))], "2 PartitionKeys"),
        ([("upsert", SHAPE.entity("a", "1")), ("update", SHAPE.entity("a", "1"))], "one entity twice"),
        ([("upsert", EntityShape.for_size(1_000_000).entity("a", f"{i}")) for i in range(5)], "at most 4 MiB"),
    ]:
        with pytest.raises(UsageError, match=rule):
            ops.batch(bad)
    assert events == [] and table.count() == 0


def test_a_filtered_scan_reports_returned_and_estimated_scanned(target, table):
    table.seed(key_strategy("single"), 200, SHAPE, progress=False)  # row i's n is filtered_value(i)
    ops, events, metrics = recorder(target, table)
    ops.scan("hot", row_key(0), row_key(100), where="n lt 10", known_rows=100)
    context = events[-1]["context"]
    matching = sum(filtered_value(i) < 10 for i in range(100))
    assert (context["returned"], context["entities"], context["estimated"]) == (matching, 100, True)
    assert events[-1]["request_type"] == "filter-scan"
    assert sum(b.estimated for b in metrics.buckets.values()) == 100


def test_partition_range_and_table_scans_count_per_partition(target, table):
    table.seed(key_strategy("set:5"), 50, SHAPE, progress=False)
    ops, events, metrics = recorder(target, table)
    ops.scan_partitions("k0000001", "k0000003", limit=1000)
    assert events[-1]["context"]["partitions"] == {"k0000001": 10, "k0000002": 10}
    ops.scan_partitions("", "", limit=25)
    assert events[-1]["context"]["entities"] == 25 and events[-1]["request_type"] == "table-scan"
    per_partition = {}
    for (_, partition, _), bucket in metrics.buckets.items():
        per_partition[partition] = per_partition.get(partition, 0) + bucket.entities
    assert per_partition["k0000001"] == 10 + 10 and sum(per_partition.values()) == 45


def test_update_with_an_etag_fails_once_someone_else_changed_the_entity(target, table):
    table.seed(key_strategy("single"), 3, SHAPE, progress=False)
    ops, events, _ = recorder(target, table)
    etag = ops.read("hot", row_key(0)).metadata["etag"]
    ops.update(SHAPE.entity("hot", row_key(0), n=1), etag=etag)
    ops.update(SHAPE.entity("hot", row_key(0), n=2), etag=etag)  # stale now
    assert [e["context"].get("error_code") for e in events[1:]] == [None, "UpdateConditionNotSatisfied"]
    assert events[-1]["request_type"] == "update-etag"


def test_scans_across_partitions_with_select_still_count_where_the_rows_were(target, table):
    """A projection without PartitionKey once failed every such scan (KeyError): the key is kept in it."""
    table.seed(key_strategy("set:5"), 50, SHAPE, progress=False)
    ops, events, _ = recorder(target, table)
    ops.scan_partitions("k0000001", "k0000003", limit=1000, select=["n"])
    assert events[-1]["exception"] is None and events[-1]["context"]["partitions"] == {"k0000001": 10, "k0000002": 10}
    rows = ops.query("PartitionKey ge 'k0000003'", select=["n"])
    assert len(rows) == 20 and events[-1]["context"]["partitions"] == {"k0000003": 10, "k0000004": 10}


def test_a_query_counts_rows_scanned_in_its_key_range_and_what_it_returned(target, table):
    keys = key_strategy("set:4")
    table.seed(keys, 400, SHAPE, progress=False)  # 100 rows under each key
    ops, events, metrics = recorder(target, table, keys=keys, seeded=400)
    pk = keys.keys()[2]
    rows = ops.query("PartitionKey eq @pk and n lt @n", parameters={"pk": pk, "n": 10}, select=["n"], name="GET cheap")
    context = events[-1]["context"]
    assert events[-1]["name"] == "GET cheap" and events[-1]["request_type"] == "query"
    assert 0 < len(rows) < 100 and all(row["n"] < 10 for row in rows)
    assert (context["returned"], context["entities"], context["estimated"], context["reach"]) == (len(rows), 100, True, "range")
    ranged = ops.query("PartitionKey eq @pk and RowKey lt @hi and n lt 50", parameters={"pk": pk, "hi": keys.row(40)})
    assert events[-1]["context"]["entities"] == 40 and len(ranged) < 40
    seek = ops.query("PartitionKey eq @pk and RowKey lt @hi", parameters={"pk": pk, "hi": keys.row(40)})
    assert len(seek) == 40 and events[-1]["context"]["entities"] == 40 and "estimated" not in events[-1]["context"]
    top = ops.query("PartitionKey eq @pk and n lt 50", parameters={"pk": pk}, top=3)
    assert len(top) == 3 and events[-1]["context"]["entities"] == 3  # cut short by top: what it returned
    table_wide = ops.query("n lt 10")
    assert events[-1]["context"]["entities"] == 400 and sum(events[-1]["context"]["partitions"].values()) == 400
    assert {row["PartitionKey"] for row in table_wide} == set(keys.keys())
    assert ops.query("PartitionKey eq 'nobody' and n lt 1") == [] and events[-1]["exception"] is None
    failed = ops.query("PartitionKey eq @pk and Missing eq", parameters={"pk": pk})
    assert failed is None and events[-1]["exception"] is not None  # the service refused the filter: counted as failed
    with pytest.raises(ValueError, match="parameter @who"):
        ops.query("PartitionKey eq @who")  # refused before anything is sent


def test_a_row_range_scan_refused_before_it_read_is_demand_for_the_rows_it_asked(azurite):
    """Through the throttling emulator (20 entities/s a partition): one 30-row scan puts the partition's budget in debt
    (a scan is charged on its answer), so the next is refused before it reads. The refused one counts the rows it asked
    as demand, as an open loop's demand of a slot never sent does; it served none (it counted 0 once, so a throttled
    scan-heavy partition looked cooler than the schedule asked)."""
    direct = resolve_target(connection_string=azurite.connection_string)
    target = direct.behind_emulator(Budgets(partition_rate=20, account_rate=10_000))
    table = TestTable.open(target)
    try:
        table.seed(key_strategy("single"), 50, SHAPE, progress=False)
        ops, events, metrics = recorder(target, table, retry=parse_retry("none"))  # each attempt once
        ops.scan("hot", row_key(0), row_key(30), asked=30)
        ops.scan("hot", row_key(10), row_key(30), asked=20)
        answered, refused = events
        assert answered["exception"] is None and answered["context"]["entities"] == 30
        assert refused["exception"].code == "ServerBusy" and refused["context"]["entities"] == 20
        assert sum(b.offered for b in metrics.buckets.values()) == 50 and sum(b.entities for b in metrics.buckets.values()) == 30
    finally:
        table.drop()
        target.emulator.stop()
