"""--reuse-table: the run writes only under a RowKey prefix of its own, changes none of the user's rows, and
removes its rows at the end unless --keep-table."""

from __future__ import annotations

import pytest
from helpers import SHORT, results_of

from loadtest.testbed.table import TestTable
from loadtest.workload.keys import row_key

MIX = "read=20,upsert=15,replace=5,update=10,update-etag=5,insert=10,delete=10,batch=10,scan=10,filter-scan=5"


@pytest.fixture
def users_table(target):
    """A table of the user's: rows under the PartitionKey the run aims at, with the very RowKeys seeding once
    used (0000000000, 0000000001…), and rows under another PartitionKey."""
    table = TestTable.open(target, name="usersown" + TestTable.named(target).name[-6:])
    with target.table(table.name) as client:
        for pk, count in (("hot", 50), ("other", 5)):
            for i in range(count):
                client.create_entity({"PartitionKey": pk, "RowKey": row_key(i), "owner": "user", "n": 1000})
        before = {(e["PartitionKey"], e["RowKey"]): (dict(e), e.metadata["etag"]) for e in client.list_entities()}
    yield table, before
    table.drop()


def rows_of(target, name):
    with target.table(name) as client:
        return {(e["PartitionKey"], e["RowKey"]): (dict(e), e.metadata["etag"]) for e in client.list_entities()}


@pytest.mark.parametrize("client", ["fast", "sdk"])
def test_a_reused_table_keeps_every_row_of_the_user_as_it_was(loadtest, azurite, target, users_table, tmp_path, client):
    table, before = users_table
    done = loadtest(
        "run", *SHORT, "--client", client, "--mix", MIX, "--table", table.name, "--reuse-table",
        "--out", str(tmp_path), "--no-report", "--connection-string", azurite.connection_string,
    )  # fmt: skip
    assert done.code == 0, done.output
    prefix = next(line.split("starting with ")[1].split()[0].strip("'") for line in done.output.splitlines() if "Reusing" in line)
    assert "Removed the" in done.output and f"under RowKey prefix {prefix!r}" in done.output
    assert rows_of(target, table.name) == before  # every row of the user's, unchanged (same ETag), nothing else
    data = results_of(tmp_path)
    assert data["integrity"]["lost"] == 0 and data["integrity"]["unacknowledged"] == 0
    assert data["integrity"]["acknowledged_writes"] > 0  # the mix's writes landed, and its reads and scans ran:
    assert {r["op_class"] for r in data["partitions"] if r["requests"]} >= {"GET", "PUT"}  # (a count of them: the machine's)
    # reads, updates and scans found the run's own seeded rows (no ResourceNotFound); only update-etag's conflict
    # between two users of the run (412, the design's conflict rate) may occur
    assert set(data["errors"]) <= {"UpdateConditionNotSatisfied"}, data["errors"]


def test_with_keep_table_the_run_s_rows_stay_under_its_prefix(loadtest, azurite, target, users_table, tmp_path):
    table, before = users_table
    done = loadtest(
        "run", *SHORT, "--mix", "insert=50,batch=50", "--table", table.name, "--reuse-table", "--keep-table",
        "--out", str(tmp_path), "--no-report", "--connection-string", azurite.connection_string,
    )  # fmt: skip
    assert done.code == 0, done.output
    after = rows_of(target, table.name)
    ours = {key for key in after if key not in before}
    assert {key: after[key] for key in before} == before
    prefixes = {rk[: rk.index("-") + 1] for _, rk in ours}
    assert len(prefixes) == 1 and next(iter(prefixes)).startswith("ps")
    assert len(ours) >= 200  # the seeded rows and the inserts, kept
