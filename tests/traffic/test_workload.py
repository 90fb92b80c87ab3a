"""The checklist read from records (``traffic/workload``): scans, reads without ``$select`` and the key order of
attributable upserts raise the run's own findings; what the records do not carry raises none."""

from __future__ import annotations

import random

from helpers import run_info

from loadtest.findings.checklist import findings
from loadtest.results import summary
from loadtest.traffic.records import LogRecord
from loadtest.traffic.tally import Tally

ACCOUNT = "https://acct.table.core.windows.net/orders"


def _record(n: int, operation: str, uri: str, *, body: int = 0, answer: int = 1100) -> LogRecord:
    return LogRecord(
        time=1_800_000_000.0 + n / 10, operation=operation, status=200 if operation.startswith("Query") else 204,
        status_text="Success", uri=uri, request_body=body, response_body=answer, client_request_id=f"op-{n}",
    )  # fmt: skip


def _judged(records: list[LogRecord]):
    tally = Tally(entity_bytes=1024)
    for record in records:
        tally.add(record)
    counts = tally.finish()
    return summary.build(counts, run_info(entity_bytes=tally.workload.entity_bytes() or 1024), workload=tally.workload.figures())


def _kinds(records: list[LogRecord]) -> tuple[set[str], dict]:
    tally = Tally(entity_bytes=1024)
    for record in records:
        tally.add(record)
    counts = tally.finish()
    workload = tally.workload.figures()
    info = run_info(entity_bytes=tally.workload.entity_bytes() or 1024)
    results = summary.build(counts, info, workload=workload)
    return {str(f.kind) for f in findings(results)}, workload


def test_scans_and_whole_entity_reads_in_the_records_are_the_checklists_findings():
    reads = [_record(n, "QueryEntity", f"{ACCOUNT}(PartitionKey='p{n % 4}',RowKey='r{n}')") for n in range(30)]
    scans = [_record(30 + n, "QueryEntities", f"{ACCOUNT}()?$filter=PartitionKey%20ge%20'p{n}'") for n in range(10)]
    unparsed = [_record(40 + n, "QueryEntity", f"{ACCOUNT}") for n in range(5)]  # no address: still a point read
    kinds, workload = _kinds(reads + scans + unparsed)
    assert {"SCANS", "NO_PROJECTION"} <= kinds, kinds
    names = {n["name"]: n for n in workload["names"]}
    assert names["QueryEntity"]["requests"] == 35 and names["QueryEntity"]["reach"] == "point"
    assert names["QueryEntities (partitions)"]["op"] == "partition-scan"
    assert names["QueryEntities (partitions)"]["returned"] == 10 and names["QueryEntities (partitions)"]["estimated"] == 10
    projected = [_record(n, "QueryEntity", f"{ACCOUNT}(PartitionKey='p',RowKey='r{n}')?%24select=a,b") for n in range(40)]
    kinds, _ = _kinds(projected)
    assert not kinds & {"SCANS", "NO_PROJECTION", "LOW_QUERY_DENSITY"}, kinds


def test_upserts_under_ever_higher_keys_are_append_only_and_shuffled_ones_are_not():
    """Ten a second over 20 seconds, each under a key past every earlier one: the counts' key order says so, as a run's."""
    keys = [f"2026-11-24T14:{n // 60:02}:{n % 60:02}" for n in range(200)]
    upsert = lambda n, key: _record(n, "InsertOrReplaceEntity", f"{ACCOUNT}(PartitionKey='{key}',RowKey='x')", body=900)  # noqa: E731
    results = _judged([upsert(n, key) for n, key in enumerate(keys)])
    kinds = {str(f.kind) for f in findings(results)}
    end = results.key_order["append"]
    assert "APPEND_ONLY" in kinds and end["share"] >= 0.9 and end["moves"] == 10, end
    random.Random(7).shuffle(keys)
    kinds, _ = _kinds([upsert(n, key) for n, key in enumerate(keys)])
    assert not kinds & {"APPEND_ONLY", "PREPEND_ONLY", "UNBATCHED_WRITES", "READ_BEFORE_WRITE"}, kinds
