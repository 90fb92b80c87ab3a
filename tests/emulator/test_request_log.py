"""The emulator's record of a request, as the diagnostic archive writes one: each operation's name, the answer's status
and response type (a throttled answer's reason), the sizes, the client's request id; a SAS signature never."""

from __future__ import annotations

import json

import pytest
from helpers import in_process

from loadtest.emulator.budgets import Budgets
from loadtest.emulator.request_log import RequestLog, answer_of
from loadtest.emulator.throttle import Throttle

BUSY = Throttle(Budgets(partition_rate=1, account_rate=10**6, timeout_share=0.0))._busy  # noqa: SLF001


def head(line: str, **headers: str) -> list[bytes]:
    return [f"{line} HTTP/1.1\r\n".encode()] + [f"{k.replace('_', '-')}: {v}\r\n".encode() for k, v in headers.items()]


@pytest.mark.parametrize(
    "line,headers,operation,category",
    [
        ("GET /acct/orders(PartitionKey='k',RowKey='r')", {}, "QueryEntity", "StorageRead"),
        ("GET /acct/orders()?$filter=PartitionKey%20eq%20'k'", {}, "QueryEntities", "StorageRead"),
        ("POST /acct/orders", {}, "InsertEntity", "StorageWrite"),
        ("PUT /acct/orders(PartitionKey='k',RowKey='r')", {}, "InsertOrReplaceEntity", "StorageWrite"),
        ("PUT /acct/orders(PartitionKey='k',RowKey='r')", {"If_Match": "*"}, "UpdateEntity", "StorageWrite"),
        ("MERGE /acct/orders(PartitionKey='k',RowKey='r')", {}, "InsertOrMergeEntity", "StorageWrite"),
        ("PATCH /acct/orders(PartitionKey='k',RowKey='r')", {"If_Match": "*"}, "MergeEntity", "StorageWrite"),
        ("DELETE /acct/orders(PartitionKey='k',RowKey='r')", {"If_Match": "*"}, "DeleteEntity", "StorageDelete"),
        ("POST /acct/$batch", {}, "EntityGroupTransaction", "StorageWrite"),
        ("POST /acct/Tables", {}, "CreateTable", "StorageWrite"),
    ],
)
def test_each_request_is_named_as_the_service_names_it(tmp_path, line, headers, operation, category):
    log = RequestLog(tmp_path / "log.json", host="127.0.0.1", port=1)
    log.write(
        started=1_795_525_445.25, ended=1_795_525_445.26, server_ms=4.0, head=head(line, **headers),
        request_bytes=(200, 50), answer=(b"HTTP/1.1 204 No Content\r\n\r\n", b""), caller="127.0.0.1:5000",
    )  # fmt: skip
    log.close()
    (record,) = [json.loads(text) for text in (tmp_path / "log.json").read_text().splitlines()]
    assert (record["operationName"], record["category"]) == (operation, category)
    assert record["time"] == "2026-11-24T13:04:05.2500000Z" and record["durationMs"] == 10
    assert record["statusText"] == "Success" and record["properties"]["serverLatencyMs"] == 4


@pytest.mark.parametrize("reason,message", [("partition", "partition"), ("account", "account")])
def test_a_throttled_answer_is_logged_with_its_status_and_the_response_type_of_its_reason(tmp_path, reason, message):
    refusal = BUSY(reason)
    answer = refusal.partition(b"\r\n\r\n")
    status, code, why = answer_of(answer[0] + b"\r\n\r\n", answer[2])
    assert (status, code, why) == (503, "ServerBusy", reason)
    log = RequestLog(tmp_path / "log.json", host="127.0.0.1", port=1)
    log.write(
        started=1.0, ended=1.0, server_ms=0.0,
        head=head("GET /acct/t(PartitionKey='k',RowKey='r')?sv=2019&sig=SECRET%3D", x_ms_client_request_id="run-0.7"),
        request_bytes=(100, 0), answer=(answer[0] + b"\r\n\r\n", answer[2]), caller="127.0.0.1:5000",
    )  # fmt: skip
    log.close()
    text = (tmp_path / "log.json").read_text()
    record = json.loads(text)
    assert record["statusCode"] == 503 and record["statusText"] == "ServerBusy" and record["identity"]["type"] == "SAS"
    expected = {"partition": "ServerBusyError", "account": "ClientAccountRequestThrottlingError"}[message]
    assert record["properties"]["metricResponseType"] == expected
    assert record["properties"]["clientRequestId"] == "run-0.7" and "SECRET" not in text


def test_a_request_log_without_the_emulator_is_refused_before_anything_starts(monkeypatch, tmp_path):
    code, _, err = in_process(monkeypatch, "run", "--request-log", str(tmp_path / "r.json"), "-t", "1s")
    assert code == 2 and "--request-log" in err and "--emulate-throttling" in err and err.count("\n") == 1, err
    code, _, err = in_process(
        monkeypatch, "run", "--emulate-throttling", "--request-log", str(tmp_path / "none" / "r.json"), "-t", "1s"
    )
    assert code == 2 and "does not exist or cannot be written" in err, err
