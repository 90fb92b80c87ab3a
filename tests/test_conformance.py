"""Conformance: the lean REST client (``--client fast``) against azure-data-tables (``--client sdk``), the reference.

One scripted sequence of every operation kind, successes and each failure, runs through each client
against a table of its own in the session's Azurite; the table contents afterwards and every request event's context must
be the same. Then throttling through the emulator: 503 ServerBusy and 500 OperationTimedOut, with
``--retry none`` and with retries, counted alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from azure.data.tables import TableClient
from helpers import typed
from locust.event import EventHook

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.account.endpoint import Target, resolve_target
from loadtest.emulator.budgets import Budgets
from loadtest.service.retry import parse_retry
from loadtest.session.table_session import TableSession
from loadtest.testbed.table import TestTable

#: What both clients must agree on, of each request event.
COMPARED = ("request_type", "name", "response_length", "failed")
CONTEXT = (
    *("partition", "op_class", "entities", "returned", "error_code", "attempts", "throttled", "throttled_by"),
    *("operations", "partitions"),
)


def recorder() -> tuple[EventHook, list[dict[str, Any]]]:
    """Locust's own request event, recording what each operation fired (timings left out: they differ)."""
    hook, fired = EventHook(), []

    def record(**event: Any) -> None:
        context = event["context"]
        fired.append(
            {
                "request_type": event["request_type"],
                "name": event["name"],
                "response_length": event["response_length"],
                "failed": event["exception"] is not None,
                **{key: context.get(key) for key in CONTEXT},
            }
        )

    hook.add_listener(record)
    return hook, fired


def row(rk: str, n: int) -> dict[str, Any]:
    return {"PartitionKey": "c", "RowKey": rk, "n": n, "text": f"row {rk}"}


def script(ops: TableSession) -> None:
    """Every operation kind, and every failure the service answers a client with."""
    ops.insert(typed("c", "typed"))
    ops.insert(typed("c", "typed"))  # 409 EntityAlreadyExists
    ops.read("c", "typed")
    ops.read("c", "missing")  # 404 ResourceNotFound
    ops.read("c", "typed", select=["text", "int64"])
    for i in range(10):
        ops.insert(row(f"r{i:02d}", i))
    ops.upsert({**row("r01", 1), "merged": "yes"})
    ops.replace(row("r02", 2))
    ops.upsert(row("u01", 50))  # an upsert inserts when the row is missing
    stale = ops.read("c", "r03").metadata["etag"]
    ops.update({**row("r03", 3), "updated": 1})  # unconditional merge: the ETag changes
    ops.update({**row("r03", 3), "lost": 1}, etag=stale)  # 412 UpdateConditionNotSatisfied
    ops.update({**row("r03", 3), "kept": 1}, etag=ops.read("c", "r03").metadata["etag"])
    ops.update(row("nowhere", 0))  # 404 on an update of a missing row
    ops.delete("c", "r04")
    ops.delete("c", "r04")  # 404 ResourceNotFound
    ops.batch([("insert", row(f"b{i:02d}", 100 + i)) for i in range(20)])
    ops.batch([("upsert", row("b00", 200)), ("update", row("b01", 201)), ("delete", row("b02", 0))])
    ops.batch([("insert", row("b50", 0)), ("insert", row("b51", 0)), ("insert", row("b05", 0))])  # fails at operation 2
    ops.scan("c", "b", "c", page_size=4)  # continuation tokens every 4 rows
    ops.scan("c", "r", "s", page_size=3, where="n lt 5", known_rows=9)
    ops.insert({"PartitionKey": "d", "RowKey": "1", "n": 1})
    ops.scan_partitions("a", "e", limit=100)
    ops.scan_partitions("", "", limit=1000)


def contents(target: Target, name: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Every row as the SDK reads it back: values and their types (the service's Timestamp left out)."""
    with TableClient.from_connection_string(target.connection_string, table_name=name) as client:
        return {
            (e["PartitionKey"], e["RowKey"]): {k: (v, type(v).__name__) for k, v in e.items()} for e in client.list_entities()
        }


def through(
    azurite: EmbeddedAzurite,
    client: str,
    run: Callable[[TableSession], None],
    *,
    budgets: Budgets | None = None,
    retry: str = "none",
):
    """``run`` through ``client`` on a table of its own in the session's Azurite (behind a fresh emulator with
    ``budgets``): the events and the table."""
    direct = resolve_target(connection_string=azurite.connection_string)
    target = direct.behind_emulator(budgets) if budgets else direct
    table = TestTable.open(direct)  # a unique name: a table scan sees this run's rows only
    try:
        hook, fired = recorder()
        ops = TableSession(target=target, table=table.name, request_event=hook, retry=parse_retry(retry), client=client)
        run(ops)
        ops.close()
        return fired, contents(direct, table.name)
    finally:
        table.drop()
        if target.emulator:
            target.emulator.stop()


def test_every_operation_and_failure_is_the_same_through_both_clients(azurite):
    fast_events, fast_table = through(azurite, "fast", script)
    sdk_events, sdk_table = through(azurite, "sdk", script)
    # the failures the script provokes, in order: each classified by the service's own error code
    assert [e["error_code"] for e in fast_events if e["failed"]] == [
        "EntityAlreadyExists",
        "ResourceNotFound",
        "UpdateConditionNotSatisfied",
        "ResourceNotFound",
        "ResourceNotFound",
        "EntityAlreadyExists",
    ]
    scans = [e for e in fast_events if e["request_type"] in ("scan", "filter-scan", "partition-scan", "table-scan")]
    assert [e["returned"] for e in scans] == [19, 4, 31, 31]
    assert [e["entities"] for e in scans] == [19, 9, 31, 31]  # the filtered scan: the rows known in its range
    assert len(fast_events) == len(sdk_events)
    for fast, sdk in zip(fast_events, sdk_events, strict=True):
        assert fast == sdk
    assert fast_table == sdk_table
    assert len(fast_table) == 31 and fast_table[("c", "r01")]["merged"] == ("yes", "str")
    assert "kept" in fast_table[("c", "r03")] and "lost" not in fast_table[("c", "r03")]


def provoke_throttling(ops: TableSession) -> None:
    """A batch of 80 against a 40-entities/s budget leaves the partition 40 entities in debt: the next read is
    refused until a second has passed (half a second once, and a slow machine's batch took longer than that)."""
    ops.batch([("insert", row(f"t{i:02d}", i)) for i in range(80)])
    ops.read("c", "t00")


@pytest.mark.parametrize(
    "code,timeout_share,over",
    [("ServerBusy", 0.0, "partition"), ("OperationTimedOut", 1.0, "timeout"), ("ServerBusy", 0.0, "account")],
)
@pytest.mark.parametrize("retry", ["none", "fixed:3,1.2"])
def test_throttled_answers_and_their_retries_are_counted_alike(azurite, code, timeout_share, over, retry):
    """Each client reads Azure's answers over a target alike: the error code, the reason (the partition's target, the
    account's limit, a timeout) and the retries."""
    rates = {"partition_rate": 10**6, "account_rate": 40} if over == "account" else {"partition_rate": 40, "account_rate": 10**6}
    budgets = Budgets(**rates, timeout_share=timeout_share)
    events = {client: through(azurite, client, provoke_throttling, budgets=budgets, retry=retry)[0] for client in ("fast", "sdk")}
    assert events["fast"] == events["sdk"]
    read = events["fast"][-1]
    assert read["throttled_by"] == {over: 1}, read
    if retry == "none":
        assert read["failed"] and read["error_code"] == code and read["attempts"] == 1 and read["throttled"] == 1
    else:  # refused once, retried after the budget refilled
        assert not read["failed"] and read["error_code"] is None and read["attempts"] == 2 and read["throttled"] == 1
