import pytest
from synthetic import environment, recorded

from loadtest.counting.request_listener import PartitionMetrics


def test_entities_not_requests_are_counted_per_second_partition_and_op_class():
    metrics = recorded({0: [{"op": "batch", "op_class": "PUT", "entities": 100}, {"op": "read"}], 1: [{"op": "read"}]})
    buckets = {(s - 1_000_000, p, c): b for (s, p, c), b in metrics.buckets.items()}
    assert buckets[(0, "hot", "PUT")].entities == 100
    assert buckets[(0, "hot", "PUT")].requests == 1
    assert buckets[(0, "hot", "GET")].entities == 1
    assert buckets[(1, "hot", "GET")].requests == 1


def test_failures_count_offered_not_served_and_keep_the_error_code():
    metrics = recorded(
        {0: [{"op": "batch", "op_class": "PUT", "entities": 100, "error": "ServerBusy", "attempts": 4, "throttled": 4}]}
    )
    (bucket,) = metrics.buckets.values()
    assert (bucket.entities, bucket.offered, bucket.failures) == (0, 100, 1)
    assert bucket.errors == {"ServerBusy": 1}
    assert (bucket.attempts, bucket.throttled) == (4, 4)


def test_latency_goes_into_an_hdr_histogram_unrounded():
    metrics = recorded({0: [{"ms": 1.234}] * 99 + [{"ms": 250.0}]})
    (hist,) = metrics.latency.seconds.values()
    assert hist.get_value_at_percentile(50) / 1000 == pytest.approx(1.234, rel=0.02)
    assert hist.get_max_value() / 1000 == pytest.approx(250.0, rel=0.01)


def test_requests_without_partition_context_are_ignored():
    env = environment()
    metrics = PartitionMetrics.register(env)
    env.events.request.fire(request_type="GET", name="/", response_time=1, response_length=0, exception=None, context={})
    assert metrics.buckets == {}
