"""Production logs judged as logs (issue #51): a day of Log Analytics records at a fraction of a request a second, with
ordinary 404/409/412 answers and one partition throttled for 40 minutes at a few entities/s. No OUTAGE from the gaps
between records, one ERRORS finding per error code (4xx ranked below the throttling), and the throttled partition's
finding saying that its own load does not explain it and what the records show instead."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from helpers import in_process

from loadtest.findings.remedies import contradictions
from loadtest.results.form import Finding

DAY = datetime(2026, 11, 23, tzinfo=UTC)
KEYS = [f"k{i:02d}" for i in range(20)]
THROTTLED_KEY = "k07"
THROTTLED_FROM, THROTTLED_FOR = timedelta(hours=10), timedelta(minutes=40)
ERRORS = {"QueryEntity": (404, "ResourceNotFound"), "UpdateEntity": (412, "UpdateConditionNotSatisfied")}


def _row(when: datetime, operation: str, key: str | None, status: int, text: str, n: int) -> dict:
    url = "https://acct.table.core.windows.net/orders"
    uri = f"{url}(PartitionKey='{key}',RowKey='r{n % 50}')" if key else url
    return {
        "TimeGenerated": when.strftime("%Y-%m-%dT%H:%M:%S.%f0Z"), "OperationName": operation, "StatusCode": str(status),
        "StatusText": text, "Uri": uri, "ObjectKey": f"/acct/orders/{key}/r{n % 50}" if key else "/acct/orders",
        "DurationMs": 4, "ServerLatencyMs": 3, "RequestBodySize": 300, "ResponseBodySize": 500, "OperationCount": 0,
        "ClientRequestId": f"req-{n}", "CorrelationId": f"cor-{n}", "MetricResponseType": "",
    }  # fmt: skip


def day_of_logs(path: Path, *, per_second: float = 0.25, seed: int = 7) -> int:
    """JSON lines as `az monitor log-analytics query` exports them: a day of point reads, updates and inserts over 20
    keys; 3 % of reads not found, 2 % of updates failing their condition, 2 % of inserts conflicting; the throttled key
    at one request a second for 40 minutes, every third answered 503 ThrottlingError. Returns the records written."""
    rng, n = random.Random(seed), 0
    with path.open("w", encoding="utf-8") as out:
        t = 0.0
        while t < 86_400:
            t += rng.expovariate(per_second)
            when, key = DAY + timedelta(seconds=t), rng.choice(KEYS)
            operation = rng.choices(["QueryEntity", "UpdateEntity", "InsertEntity"], [6, 3, 1])[0]
            status, text = 200, "Success"
            if operation in ERRORS and rng.random() < (0.03 if operation == "QueryEntity" else 0.02):
                status, text = ERRORS[operation]
            elif operation == "InsertEntity" and rng.random() < 0.02:
                status, text = 409, "EntityAlreadyExists"
            out.write(json.dumps(_row(when, operation, None if operation == "InsertEntity" else key, status, text, n)) + "\n")
            n += 1
        for s in range(int(THROTTLED_FOR.total_seconds())):
            when = DAY + THROTTLED_FROM + timedelta(seconds=s + 0.5)
            throttled = s % 3 == 0
            status, text = (503, "ThrottlingError") if throttled else (200, "Success")
            out.write(json.dumps(_row(when, "QueryEntity", THROTTLED_KEY, status, text, n)) + "\n")
            n += 1
    return n


def test_a_day_of_logs_is_judged_as_logs(monkeypatch, tmp_path):
    log = tmp_path / "StorageTableLogs.json"
    records = day_of_logs(log)
    out = tmp_path / "read"
    code, stdout, stderr = in_process(monkeypatch, "traffic", str(log), "--out", str(out), "--no-report")
    assert code == 0 and "Traceback" not in stdout + stderr, stdout + stderr
    results = json.loads((out / "results.json").read_text())
    assert results["logs"]["records"] == records
    findings = [Finding(**f) for f in results["findings"]]
    kinds = [f.kind for f in findings]
    # gaps between records at a fraction of a request a second are no outage
    assert "OUTAGE" not in kinds, [f.message for f in findings if f.kind == "OUTAGE"]
    # one ERRORS finding per error code, each with its status, share and the partitions with the most
    errors = [f for f in findings if f.kind == "ERRORS"]
    codes = [
        next(code for code in ("ResourceNotFound", "UpdateConditionNotSatisfied", "EntityAlreadyExists") if code in f.message)
        for f in errors
    ]
    assert sorted(codes) == ["EntityAlreadyExists", "ResourceNotFound", "UpdateConditionNotSatisfied"]
    assert all(f.cause == "application" and "4xx" in f.message and "% of" in f.message for f in errors)
    assert "HTTP 404 ResourceNotFound" in next(f.message for f in errors if "ResourceNotFound" in f.message)
    # the throttled partition: its own load cannot explain it, and nothing else the records hold does
    (throttled,) = [f for f in findings if f.kind == "THROTTLED"]
    assert throttled.partition == THROTTLED_KEY and throttled.cause == "unexplained"
    assert "its own load does not explain it" in throttled.message
    assert "nothing in the data read explains it" in throttled.message
    assert "more PartitionKeys" not in throttled.remedy and "other tables" in throttled.remedy
    # heaviest first: the throttling before the application's own 4xx answers; the console in the same order
    assert kinds.index("THROTTLED") < min(kinds.index("ERRORS"), len(kinds))
    printed = [line.split()[0] for line in stdout.splitlines() if line.startswith("  ") and line.split()[0] in kinds]
    assert printed == kinds[: len(printed)]
    assert not contradictions(findings)


def test_a_handful_of_5xx_and_network_errors_rank_below_the_throttling_and_carry_their_own_class_remedy(monkeypatch, tmp_path):
    """Issue #64: a day of logs with 40 minutes of throttling, plus two 500 ServerOtherError answers and a request the
    network cut short: the throttling is the first finding (the two 500s are 0.01 % of the records, a sliver ranked
    below every finding about more), and neither the 5xx nor the network error reads "never retry a 4xx"."""
    log = tmp_path / "StorageTableLogs.json"
    records = day_of_logs(log)
    with log.open("a", encoding="utf-8") as out:
        for n, (hour, status, text) in enumerate(
            [(3, 500, "ServerOtherError"), (15, 500, "ServerOtherError"), (20, None, "NetworkError")]
        ):
            row = _row(DAY + timedelta(hours=hour), "QueryEntity", KEYS[n], 0, text, records + n)
            out.write(json.dumps({**row, "StatusCode": None if status is None else str(status)}) + "\n")
    out_dir = tmp_path / "read"
    code, stdout, stderr = in_process(monkeypatch, "traffic", str(log), "--out", str(out_dir), "--no-report")
    assert code == 0 and "Traceback" not in stdout + stderr, stdout + stderr
    findings = [Finding(**f) for f in json.loads((out_dir / "results.json").read_text())["findings"]]
    assert findings[0].kind == "THROTTLED" and findings[0].partition == THROTTLED_KEY, [(f.kind, f.message) for f in findings]
    assert findings[0].share is not None and findings[0].share > 0.001
    server = next(f for f in findings if f.kind == "ERRORS" and "ServerOtherError" in f.message)
    network = next(f for f in findings if f.kind == "ERRORS" and "NetworkError" in f.message)
    assert server.share is not None and server.share < 0.001 and network.share < 0.001
    assert "never retry a 4xx" not in server.remedy and "5xx answer is the service's" in server.remedy, server.remedy
    assert "never retry a 4xx" not in network.remedy and "client's path" in network.remedy, network.remedy
    assert server.cause == "failed" and network.cause == "failed"
    # the 4xx answers (3 % and 2 % of the records) keep their rank and their rule; the slivers come after them
    ranked = [f.kind for f in findings]
    assert ranked.index("THROTTLED") < findings.index(server) and findings.index(network) > max(
        i for i, f in enumerate(findings) if f.cause == "application"
    )
    assert all("never retry a 4xx" in f.remedy for f in findings if f.cause == "application")
    printed = [line.split()[0] for line in stdout.splitlines() if line.startswith("  ") and line.split()[0] in ranked]
    assert printed == ranked[: len(printed)]
