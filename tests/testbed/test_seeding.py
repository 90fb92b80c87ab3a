"""Seeding against a real Azurite: every seeded entity written once, in batches the service takes, under the keys
the strategy gives."""

from loadtest.service.entities import EntityShape
from loadtest.workload.key_specs import key_strategy


def test_seeded_entities_in_the_table_equal_the_requested_count(table):
    assert table.seed(key_strategy("single"), 1234, EntityShape.for_size(1024), progress=False) == 1234
    assert table.count("hot") == 1234
    assert table.count() == 1234


def test_large_entities_seed_in_batches_under_4_mib(table):
    table.seed(key_strategy("single:big"), 130, EntityShape.for_size(200_000, partition_key="big"), progress=False)
    assert table.count("big") == 130


def test_seeding_follows_the_key_strategy(table):
    table.seed(key_strategy("hash-prefix:8"), 100, EntityShape.for_size(512), progress=False)
    assert table.count() == 100
    assert table.count("000") == 13 and table.count("007") == 12
