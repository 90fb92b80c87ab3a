"""The test table's lifecycle against a real Azurite: create, seed, count, reuse, drop."""

import pytest

from loadtest.entities import EntityShape
from loadtest.exit_codes import RunError
from loadtest.keys import key_strategy
from loadtest.table import TestTable


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


def test_the_tool_never_takes_over_an_existing_table_unasked(table, target):
    with pytest.raises(RunError, match="pass --reuse-table"):
        TestTable.open(target, name=table.name)
    reused = TestTable.open(target, name=table.name, reuse=True)
    assert not reused.created
    reused.drop()  # a no-op: the run did not create it
    assert TestTable.open(target, name=table.name, reuse=True).name == table.name


def test_reusing_a_missing_table_is_refused(target):
    with pytest.raises(RunError, match="does not exist"):
        TestTable.open(target, name="nosuchtable123", reuse=True)


def test_a_created_table_is_deleted_by_drop(target):
    created = TestTable.open(target)
    created.drop()
    names = [t.name for t in target.service().list_tables()]
    assert created.name not in names
