"""The log forms read from synthetic lines written to the documented layouts: each form's fields, its quoting, what
does not parse (counted by reason, never a traceback), classic duplicates; and what a record says of its partition,
its entities and its throttling."""

from __future__ import annotations

import json

import pytest
from helpers import in_process

from loadtest.counting.buckets import UNATTRIBUTED
from loadtest.service.error_codes import BUSY, logged_throttling
from loadtest.service.log_forms import parse_time
from loadtest.traffic.attribution import attribute
from loadtest.traffic.classic import DUPLICATE
from loadtest.traffic.columns import from_records
from loadtest.traffic.forms import detect, records
from loadtest.traffic.records import LogRecord, Unreadable
from loadtest.traffic.tally import Tally

ENTITY = "http://127.0.0.1:10002/acct/orders(PartitionKey='k%27%270',RowKey='r1')"


def record(**given) -> LogRecord:
    values = {"time": 1_795_525_445.25, "operation": "QueryEntity", "status": 200, "status_text": "Success", "uri": ENTITY}
    return LogRecord(**{**values, **given})


def classic_line(
    *, status="200", text="Success", url=ENTITY, request_id="id-1", count="0", agent="sdk", client="c-1",
    time="2026-11-24T13:04:05.2500000Z",
):  # fmt: skip
    fields = ["1.0", time, "QueryEntity", text, status, "5", "3", "authenticated", "acct",
              "acct", "table", f'"{url}"', '"/acct/orders"', request_id, count, "10.0.0.1:5000", "2019-02-02", "500",
              "0", "300", "1324", "0", "", "", '""', "", "", f'"{agent}"', "", client]  # fmt: skip
    return ";".join(fields) + "\n"


def test_each_form_is_told_by_its_first_line():
    assert detect('{"time":"2026-11-24T13:04:05Z","operationName":"QueryEntity","properties":{}}') == "diagnostic"
    assert detect("TimeGenerated,OperationName,StatusCode,Uri") == "analytics-csv"
    assert detect('[{"TimeGenerated":"2026-11-24T13:04:05Z"}') == "analytics-json"
    assert detect('{"TimeGenerated":"2026-11-24T13:04:05Z","OperationName":"QueryEntity"}') == "analytics-json"
    assert detect(classic_line()) == "classic" and detect("hello") is None


@pytest.mark.parametrize(
    "text,epoch",
    [
        ("2026-11-24T13:04:05.2500000Z", 1_795_525_445.25),
        ("2026-11-24 13:04:05.25", 1_795_525_445.25),
        ("2026-11-24T14:04:05.25+01:00", 1_795_525_445.25),
        ("11/24/2026, 1:04:05.250 PM", 1_795_525_445.25),
    ],
)
def test_the_logs_times_are_read_in_utc(text, epoch):
    assert parse_time(text) == pytest.approx(epoch)


def test_a_diagnostic_record_reads_its_nested_fields_and_a_broken_line_is_counted_by_why():
    line = json.dumps({
        "time": "2026-11-24T13:04:05.2500000Z", "operationName": "InsertOrReplaceEntity", "statusCode": 503,
        "statusText": "ServerBusy", "durationMs": 7, "uri": ENTITY, "correlationId": "x",
        "properties": {"clientRequestId": "run-0.1", "serverLatencyMs": 2, "requestBodySize": 900, "responseBodySize": 0},
        "identity": {"metricResponseType": "ServerBusyError"},
    })  # fmt: skip
    good, broken, missing = records("diagnostic", [line, "{not json\n", '{"time": "2026-11-24T13:04:05Z"}\n'])
    assert isinstance(good, LogRecord) and good.status == 503 and good.response_type == "ServerBusyError"
    assert good.client_request_id == "run-0.1" and good.duration_ms == 7 and good.request_body == 900
    assert isinstance(broken, Unreadable) and "does not parse" in broken.reason
    assert isinstance(missing, Unreadable) and missing.reason == "a diagnostic log record without operationName"


def test_log_analytics_csv_and_json_arrays_read_alike_with_unknown_status_codes():
    header = "TimeGenerated,OperationName,StatusCode,StatusText,Uri,DurationMs,ClientRequestId,MetricResponseType\n"
    rows = ['2026-11-24T13:04:05.25Z,QueryEntity,Unknown,Success,"' + ENTITY + '",3,c-1,Success\n']
    (from_csv,) = records("analytics-csv", [header, *rows])
    objects = [{"TimeGenerated": "2026-11-24T13:04:05.25Z", "OperationName": "QueryEntity", "StatusCode": "Unknown",
                "StatusText": "Success", "Uri": ENTITY, "DurationMs": 3, "ClientRequestId": "c-1"}]  # fmt: skip
    text = json.dumps(objects * 3, indent=2)
    from_json = list(records("analytics-json", [line + "\n" for line in text.splitlines()]))
    assert from_csv.status is None and from_csv.uri == ENTITY and len(from_json) == 3
    assert all(r.time == from_csv.time and r.client_request_id == "c-1" for r in from_json)


def test_classic_fields_are_unquoted_and_html_decoded_and_repeats_in_an_hour_are_counted_as_duplicates():
    agent = "app &quot;orders&quot;&#59; v2"  # as the service writes a field holding quotes and a semicolon
    lines = [classic_line(agent=agent), classic_line(), classic_line(request_id="id-2"), "1.0;too;few\n"]
    first, duplicate, second, short = records("classic", lines)
    assert isinstance(first, LogRecord) and first.uri == ENTITY and first.request_id == "id-1"
    assert first.response_body == 1024 and first.client_request_id == "c-1"
    assert isinstance(duplicate, Unreadable) and duplicate.reason == DUPLICATE
    assert isinstance(second, LogRecord) and isinstance(short, Unreadable)


@pytest.mark.parametrize(
    "status,text,response_type,reason",
    [
        (503, "ServerBusy", "ServerBusyError", "partition"),
        (503, "ThrottlingError", "ClientAccountRequestThrottlingError", "account"),
        (503, "SASThrottlingError", "", BUSY),
        (500, "ServerTimeoutError", "", "timeout"),
        (500, "ClientTimeoutError", "", None),  # the client's own timeout: not the service's answer over a target
        (404, "ResourceNotFound", "ClientOtherError", None),
        (200, "Success", "Success", None),
    ],
)
def test_a_logged_answer_is_throttling_for_the_reason_its_record_tells(status, text, response_type, reason):
    assert logged_throttling(status, text, response_type) == reason


TABLE = "http://h/acct/orders"


def test_what_a_record_names_and_what_it_cannot():
    said = attribute(
        from_records(
            [
                record(),
                record(operation="QueryEntities", uri=f"{TABLE}()?$filter=PartitionKey%20eq%20'k1'", response_body=5000),
                record(operation="InsertEntity", uri="http://h/acct/orders", status=204),
                record(operation="EntityGroupTransaction", uri="http://h/acct/$batch", request_body=13000),
                record(operation="CreateTable", uri="http://h/acct/Tables"),
                record(uri="http://h/acct/orders(PartitionKey='a%2Fb',RowKey='1')"),  # percent-encoded: read one at a time
                record(operation="QueryEntities", uri="http://h/acct/orders()", status=503, response_body=5000),
            ]
        ),
        entity_bytes=1000,
    ).to_pylist()
    assert [(r["op_class"], r["partition"], r["entities"], r["estimated"]) for r in said] == [
        ("GET", "k'0", 1, False),
        ("GET", "k1", 5, True),
        ("PUT", UNATTRIBUTED, 1, False),
        ("PUT", UNATTRIBUTED, 10, True),
        (None, None, 1, False),  # an operation on tables: not an entity's
        ("GET", "a/b", 1, False),
        ("GET", UNATTRIBUTED, 0, True),  # a throttled query returned nothing
    ]


def test_retries_of_one_operation_are_one_request_and_each_an_attempt():
    tally = Tally(entity_bytes=1000)
    busy = {"status": 503, "status_text": "ServerBusy", "response_type": "ServerBusyError"}
    for at, given in ((0.0, busy), (0.3, busy), (0.9, {})):
        tally.add(record(time=1_795_525_445 + at, client_request_id="run-0.1", **given))
    tally.add(record(time=1_795_525_445.95, client_request_id=""))  # no id: an operation of its own
    (bucket,) = tally.finish().buckets.values()
    assert (bucket.requests, bucket.attempts, bucket.throttled, bucket.entities) == (2, 4, 2, 2)
    assert dict(bucket.throttled_by) == {"partition": 2} and bucket.failures == 0


@pytest.mark.parametrize(
    "column,shown,epoch",
    [
        ("TimeGenerated [UTC]", "11/24/2026, 1:04:05.250 PM", 1_795_525_445.25),
        ("TimeGenerated [UTC+01:00]", "11/24/2026, 2:04:05.250 PM", 1_795_525_445.25),
        ("TimeGenerated [UTC-05:00]", "11/24/2026, 8:04:05.250 AM", 1_795_525_445.25),
        ("TimeGenerated", "2026-11-24T13:04:05.25Z", 1_795_525_445.25),
    ],
)
def test_the_portals_export_names_its_time_column_with_its_zone_and_its_times_are_read_in_utc(column, shown, epoch):
    header = f"\ufeff{column},OperationName,Uri,TenantId\r\n"  # a BOM, CRLF, a column the tool does not read
    row = f'"{shown}",QueryEntity,"{ENTITY}",0000\r\n'
    (record,) = records("analytics-csv", [header, row])
    assert record.time == pytest.approx(epoch) and record.operation == "QueryEntity"
    as_json = json.dumps([{column: shown, "OperationName": "QueryEntity", "Uri": ENTITY}], indent=2)
    (record,) = records("analytics-json", as_json.splitlines(True))
    assert record.time == pytest.approx(epoch)


def test_times_in_a_zone_the_export_does_not_state_are_refused_in_one_line_and_nothing_written(tmp_path, monkeypatch):
    export = tmp_path / "StorageTableLogs.csv"
    export.write_text(f'TimeGenerated [Local Time],OperationName,Uri\n"11/24/2026, 1:04:05.250 PM",QueryEntity,"{ENTITY}"\n')
    code, _, err = in_process(monkeypatch, "traffic", str(export), "--out", str(tmp_path / "out"))
    assert code == 2 and err.count("\n") == 1 and "'TimeGenerated [Local Time]'" in err and "UTC" in err, err
    assert not (tmp_path / "out").exists()


def az_cli(rows: list[dict]) -> str:
    """``az monitor log-analytics query``'s JSON as its output transform writes it (azure-cli's
    ``transform_log_analytics_query_output``): each row ``TableName`` first, then every value through ``str()``, so a
    null is ``"None"`` and a number its digits."""
    return json.dumps([{"TableName": "PrimaryResult", **{column: str(value) for column, value in row.items()}} for row in rows])


def test_an_az_cli_export_reads_every_row_as_the_query_returned_it():
    """The issue: an hour exported as the docs say, 2,096 of 19,844 rows unreadable — every null number was "None"."""
    throttled = {"TimeGenerated": "2026-11-24T13:04:05.25Z", "OperationName": "QueryEntity", "StatusCode": 503,
                 "StatusText": "ServerBusy", "Uri": ENTITY, "DurationMs": 3.5, "ServerLatencyMs": None,
                 "RequestBodySize": None, "ResponseBodySize": 312, "OperationCount": 0, "ClientRequestId": "c-1",
                 "CorrelationId": "id-1", "MetricResponseType": "ServerBusyError"}  # fmt: skip
    served = {**throttled, "StatusCode": 200, "StatusText": "Success", "ServerLatencyMs": 2, "MetricResponseType": "Success"}
    blank = {**served, "ClientRequestId": None, "DurationMs": ""}
    rows = [throttled, served, blank]
    exported = list(records("analytics-json", az_cli(rows).splitlines(True)))
    as_queried = list(records("analytics-json", json.dumps(rows).splitlines(True)))
    assert not [r for r in exported if isinstance(r, Unreadable)], exported
    assert exported == as_queried and exported[0].server_latency_ms is None and exported[0].status == 503
    assert exported[2].client_request_id == "" and exported[2].duration_ms is None
