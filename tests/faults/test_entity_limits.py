"""Entities as the service sizes them: every property the tool adds counted, the size asked honoured or refused."""

from __future__ import annotations

import pytest
from helpers import SHORT, results_of, tables

from loadtest.service.entities import entity_bytes
from loadtest.testbed.table import TestTable


@pytest.mark.parametrize(
    "args,flag,rule",
    [
        (("--properties", "252"), "--properties 252", "at most 251"),
        (("--entity-size", "1"), "--entity-size 1", "at least 68"),
        (("--entity-size", "300000", "--properties", "1"), "--entity-size 300000 over --properties 1", "--properties 5"),
    ],
)
def test_an_entity_the_service_cannot_hold_is_refused_before_anything_is_sent(loadtest, azurite, target, args, flag, rule):
    before = tables(target)
    done = loadtest("run", *SHORT, *args, "--connection-string", azurite.connection_string)
    assert done.code == 2, done.output
    (line,) = [line for line in done.stderr.splitlines() if "error" in line]
    assert line.startswith("loadtest: error: ") and flag in line and rule in line, line
    assert "Traceback" not in done.output and tables(target) == before


def test_the_size_asked_is_the_size_written_and_reported(loadtest, azurite, target, tmp_path):
    done = loadtest(
        "run", *SHORT, "--entity-size", "8000", "--properties", "251", "--mix", "read=1", "--keep-table",
        "--out", str(tmp_path), "--connection-string", azurite.connection_string,
    )  # fmt: skip
    assert done.code == 0, done.output
    run = results_of(tmp_path)["run"]
    table = TestTable(target=target, name=run["table"], created=True)
    try:
        with target.table(table.name) as client:
            row = next(iter(client.list_entities(results_per_page=1)))
    finally:
        table.drop()
    assert len(row) + 1 == 255  # 251 payload properties, n, PartitionKey and RowKey, and the service's Timestamp
    assert entity_bytes(dict(row)) == run["entity_bytes"] == 8000
    assert "8,000 bytes" in (tmp_path / "report.html").read_text()
