import re
from collections import Counter

import pytest

from loadtest.exit_codes import UsageError
from loadtest.service.entities import (
    MAX_PAYLOAD_PROPERTIES,
    EntityShape,
    batch_bytes,
    entity_bytes,
    filtered_value,
    validate_entity,
)


@pytest.mark.parametrize("size", [68, 69, 200, 1024, 4096, 65536, 500_000, 1024 * 1024])
@pytest.mark.parametrize("properties", [0, 1, 3])
def test_shape_builds_entities_of_the_asked_size_and_says_their_real_size(size, properties):
    if size > 60_000 and properties:
        properties = 0  # one string holds at most 64 KiB
    try:
        shape = EntityShape.for_size(size, partition_key="hot", properties=properties)
    except UsageError as refused:  # too small for the properties asked: refused, naming the smallest size
        smallest = int(re.search(r"at least (\d+)", str(refused)).group(1))
        assert size < smallest == EntityShape.for_size(smallest, properties=properties).bytes
        return
    real = entity_bytes(shape.entity("hot", "0000000001"))
    assert real == shape.bytes and size <= real <= size + 1  # strings count 2 bytes a character


def test_an_entity_smaller_than_its_keys_and_properties_is_refused_with_the_smallest_size():
    with pytest.raises(UsageError, match=r"--entity-size 1: the smallest entity this run writes is 68 bytes .* at least 68"):
        EntityShape.for_size(1)
    assert EntityShape.for_size(68).bytes == 68


def test_the_property_limit_counts_every_property_the_tool_adds():
    assert MAX_PAYLOAD_PROPERTIES == 251
    shape = EntityShape.for_size(8000, properties=251)
    assert len(shape.entity("hot", "0000000001")) + 1 == 255  # and Timestamp
    with pytest.raises(UsageError, match="--properties 252: at most 251: .* the tool adds 'n'"):
        EntityShape.for_size(8000, properties=252)


def test_large_entities_spread_over_properties_under_32k_characters():
    shape = EntityShape.for_size(1024 * 1024)
    assert shape.properties > 1
    assert all(len(v) <= 32 * 1024 for v in shape.payload.values())


def test_one_property_over_32k_characters_is_refused():
    with pytest.raises(UsageError, match="at most 32768"):
        EntityShape.for_size(100_000, properties=1)


def test_more_than_255_properties_are_refused():
    with pytest.raises(UsageError, match="at most 255"):
        validate_entity({"PartitionKey": "p", "RowKey": "r", **{f"c{i}": 1 for i in range(253)}})
    validate_entity({"PartitionKey": "p", "RowKey": "r", **{f"c{i}": 1 for i in range(252)}})


def test_entities_over_1_mib_are_refused():
    big = {"PartitionKey": "p", "RowKey": "r", **{f"c{i}": "x" * 30_000 for i in range(20)}}
    with pytest.raises(UsageError, match="1 MiB"):
        validate_entity(big)


def test_batch_estimate_grows_with_operations():
    shape = EntityShape.for_size(1024)
    assert batch_bytes(shape, 100) == 100 * batch_bytes(shape, 1)
    assert batch_bytes(EntityShape.for_size(65536), 100) > 4 * 1024 * 1024


@pytest.mark.parametrize("keys", [1, 4, 16])
def test_seeded_n_spreads_evenly_within_every_partition(keys):
    """Filters on n select the same share in every partition (index % 100 gave a 4-key set's partitions a quarter of the
    values each)."""
    for k in range(keys):
        values = Counter(filtered_value(i) for i in range(k, 40_000, keys))
        assert set(values) == set(range(100))
        assert max(values.values()) - min(values.values()) <= 0.3 * 40_000 / keys / 100 + 2
