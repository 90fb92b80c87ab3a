import pytest

from loadtest.entities import EntityShape, batch_bytes, entity_bytes, validate_entity
from loadtest.errors import UsageError


@pytest.mark.parametrize("size", [200, 1024, 4096, 65536, 500_000, 1024 * 1024])
def test_shape_builds_entities_of_the_asked_size(size):
    shape = EntityShape.for_size(size, partition_key="hot")
    assert abs(entity_bytes(shape.entity("hot", "0000000001")) - size) <= 2 * shape.properties


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
