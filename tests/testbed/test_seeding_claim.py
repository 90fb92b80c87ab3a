"""Who seeds a table the engines of one run share, against a real Azurite: the first claim seeds, the others find it
seeded, and a claim whose engine died is taken over."""

import os
import time

from azure.data.tables import TableClient

from loadtest.service.entities import EntityShape
from loadtest.testbed import seeding_claim
from loadtest.testbed.seeding_claim import seed_once, seeding_record
from loadtest.testbed.table import TestTable
from loadtest.workload.key_specs import key_strategy

SHAPE = EntityShape.for_size(200)


def shared(target, run_id: str, engine: str) -> TestTable:
    table = TestTable.named(target, f"pstress{run_id.replace('-', '')}{os.getpid()}")
    table.share(run_id, engine)
    return table


def test_the_engine_that_claims_second_finds_the_rows_seeded_and_writes_none(target, caplog):
    first, second = shared(target, "once-run", "e1"), shared(target, "once-run", "e2")
    keys = key_strategy("single", default_key="hot", rows=first.seeded_prefix)
    caplog.set_level("INFO", logger="loadtest")
    try:
        assert seed_once(first, keys, 40, SHAPE, seeding="s", engine="e1") == 40
        caplog.clear()
        assert seed_once(second, keys, 40, SHAPE, seeding="s", engine="e2") == 40 and second.seeded == 40
        assert "Seeded once for the run by engine e1: 40 entities" in caplog.text and "Seeding" not in caplog.text
        assert first.count("hot") == 40
        with TableClient.from_connection_string(target.connection_string, first.name) as client:
            record = seeding_record(first, "s")
            assert client.get_entity(record["PartitionKey"], record["RowKey"])["state"] == "seeded"
    finally:
        TestTable(target=target, name=first.name, created=True).drop()


def test_a_seeding_left_by_an_engine_that_died_is_taken_over(target, monkeypatch):
    """An engine claimed the seeding and died (its record never touched again): the next engine waits until the record
    is stale, then seeds the rows itself."""
    monkeypatch.setattr(seeding_claim, "CLAIM_STALE_S", 1.0)
    table = shared(target, "stale-run", "e2")
    seeds = key_strategy("single", default_key="hot", rows=table.seeded_prefix)
    seeding = "one seeding"
    record = seeding_record(table, seeding)
    try:
        with TableClient.from_connection_string(target.connection_string, table.name) as client:
            client.create_entity({**record, "state": "seeding", "engine": "e1", "count": 50})
        started = time.monotonic()
        assert seed_once(table, seeds, 50, SHAPE, seeding=seeding, engine="e2") == 50
        assert time.monotonic() - started >= 1.0
        assert table.count("hot") == 50
        with TableClient.from_connection_string(target.connection_string, table.name) as client:
            assert client.get_entity(record["PartitionKey"], record["RowKey"])["engine"] == "e2"
    finally:
        TestTable(target=target, name=table.name, created=True).drop()
