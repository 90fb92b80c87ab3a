from synthetic import environment

from loadtest.client import NAMES, TableOperations
from loadtest.entities import EntityShape
from loadtest.keys import row_key
from loadtest.metrics import PartitionMetrics

SHAPE = EntityShape.for_size(1024)


def recorder(target, table):
    env = environment()
    events = []
    env.events.request.add_listener(lambda **kw: events.append(kw))
    metrics = PartitionMetrics.register(env)
    ops = TableOperations(target=target, table=table.name, partition_key="hot", request_event=env.events.request)
    return ops, events, metrics


def test_a_batch_of_n_is_counted_as_n_entities(target, table):
    ops, events, metrics = recorder(target, table)
    ops.batch(SHAPE.entity("hot", f"b{i:03d}") for i in range(37))
    (event,) = events
    assert event["request_type"] == "batch" and event["exception"] is None
    assert event["context"]["entities"] == 37 and event["context"]["op_class"] == "PUT"
    assert sum(b.entities for b in metrics.buckets.values()) == 37
    assert table.count("hot") == 37


def test_a_row_range_scan_counts_the_entities_it_returned(target, table):
    table.seed("hot", 50, SHAPE, progress=False)
    ops, events, _ = recorder(target, table)
    ops.scan(row_key(10), row_key(30), page_size=7)  # three continuation tokens followed
    (event,) = events
    assert event["context"]["entities"] == 20 and event["context"]["op_class"] == "GET"


def test_each_operation_fires_one_event_with_context_and_a_low_cardinality_name(target, table):
    table.seed("hot", 5, SHAPE, progress=False)
    ops, events, _ = recorder(target, table)
    ops.read(row_key(1))
    ops.insert(SHAPE.entity("hot", "new1"))
    ops.upsert(SHAPE.entity("hot", row_key(2)))
    ops.replace(SHAPE.entity("hot", row_key(3)))
    ops.update(SHAPE.entity("hot", row_key(4)))
    ops.delete("new1")
    assert [e["request_type"] for e in events] == ["read", "insert", "upsert", "replace", "update", "delete"]
    for event in events:
        assert event["exception"] is None, event
        assert event["name"] == NAMES[event["request_type"]] and "hot" not in event["name"]
        assert event["context"]["partition"] == "hot"
        assert event["context"]["attempts"] == 1 and event["context"]["throttled"] == 0
    assert table.count("hot") == 5


def test_failures_are_classified_by_the_service_error_code(target, table):
    ops, events, metrics = recorder(target, table)
    ops.read("missing")
    ops.insert(SHAPE.entity("hot", "dup"))
    ops.insert(SHAPE.entity("hot", "dup"))
    codes = [e["context"]["error_code"] for e in events]
    assert codes == ["ResourceNotFound", None, "EntityAlreadyExists"]
    assert events[0]["exception"].code == "ResourceNotFound" and events[0]["exception"].status == 404
    errors = sum((b.errors for b in metrics.buckets.values()), start=__import__("collections").Counter())
    assert errors == {"ResourceNotFound": 1, "EntityAlreadyExists": 1}
