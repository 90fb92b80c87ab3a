"""The emulator's record of a request, as the diagnostic archive writes one: each operation's name, the answer's status
and response type (a throttled answer's reason), the sizes, the client's request id; a SAS signature never."""

from __future__ import annotations

import csv
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


def test_a_request_log_named_like_the_classic_logs_is_written_in_their_form_and_reads_as_the_json_one_does(tmp_path):
    """To ``*.log`` (as ``$logs/table/…/NNNNNN.log``): version 1.0 lines, quoted fields HTML-encoded; each reads back
    (``loadtest traffic``'s reader, block and line) as the diagnostic record of the same request does, but for the
    response type, which the classic form has not: a throttled answer's status message names no reason."""
    from loadtest.traffic.classic import HourSeen
    from loadtest.traffic.columns import classic_block
    from loadtest.traffic.forms import detect, records

    timed_out = Throttle(Budgets(partition_rate=1, account_rate=10**6, timeout_share=1.0))._busy("partition")  # noqa: SLF001
    answers = {
        "ok": (b"HTTP/1.1 200 OK\r\n\r\n", b"{}"),
        "busy": (BUSY("partition").partition(b"\r\n\r\n")[0] + b"\r\n\r\n", BUSY("partition").partition(b"\r\n\r\n")[2]),
        "timeout": (timed_out.partition(b"\r\n\r\n")[0] + b"\r\n\r\n", timed_out.partition(b"\r\n\r\n")[2]),
        "missing": (b"HTTP/1.1 404 Not Found\r\nx-ms-error-code: ResourceNotFound\r\n\r\n", b""),
    }
    requests = [
        ("GET /acct/orders(PartitionKey='a%3Bb%22c%26d',RowKey='r')", {"x_ms_client_request_id": 'id;"1"'}, "ok"),
        ("GET /acct/orders(PartitionKey='hot',RowKey='r')?sv=2019&sig=SECRET%3D", {"x_ms_client_request_id": "id-2"}, "busy"),
        ("MERGE /acct/orders(PartitionKey='hot',RowKey='r')", {"x_ms_client_request_id": "id-3"}, "timeout"),
        ("DELETE /acct/orders(PartitionKey='k',RowKey='gone')", {"If_Match": "*"}, "missing"),
        ("POST /acct/$batch", {"user_agent": 'app "x"; sdk'}, "ok"),
    ]
    for name in ("log.json", "log.log"):
        log = RequestLog(tmp_path / name, host="127.0.0.1", port=1)
        for i, (line, headers, answer) in enumerate(requests):
            log.write(
                started=1_795_525_445.25 + i, ended=1_795_525_445.26 + i, server_ms=4.0, head=head(line, **headers),
                request_bytes=(200, 50), answer=answers[answer], caller="127.0.0.1:5000",
            )  # fmt: skip
        log.close()
    text = (tmp_path / "log.log").read_text()
    lines = text.splitlines(keepends=True)
    assert len(lines) == len(requests) and detect(lines[0]) == "classic" and "SECRET" not in text
    assert all(len(fields) == 30 for fields in csv.reader(lines, delimiter=";"))  # version 1.0's, a ; only quoted
    json_records = list(records("diagnostic", (tmp_path / "log.json").read_text().splitlines(keepends=True)))
    classic_records = list(records("classic", lines, HourSeen()))
    table, repeated = classic_block(text.encode(), HourSeen())
    assert not repeated and table.num_rows == len(requests)

    def said(record, *fields):  # times to the microsecond: the block reader's pass through nanoseconds rounds
        return tuple(round(v, 6) if name == "time" else v for name, v in ((n, getattr(record, n)) for n in fields))

    fields = ("time", "operation", "status", "uri", "object_key", "duration_ms", "request_body", "client_request_id")
    for ours, theirs, row in zip(classic_records, json_records, table.to_pylist(), strict=True):
        assert said(ours, *fields) == said(theirs, *fields)
        assert said(type("Row", (), row), *fields) == said(theirs, *fields)
        assert ours.response_type == "" and theirs.response_type
    assert [r.status_text for r in classic_records] == [
        "Success", "SASThrottlingError", "ServerTimeoutError", "ClientOtherError", "Success"
    ]  # fmt: skip
    assert [r.status_text for r in json_records][1:3] == ["ServerBusy", "OperationTimedOut"]
