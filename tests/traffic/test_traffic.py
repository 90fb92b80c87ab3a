"""``loadtest traffic`` against ground truth: a real run through the throttling emulator writes Azure's records of
every request it relayed (``--request-log``); the records, read back, say per partition and op class what the run
itself counted. The same records converted to every documented form say the same."""

from __future__ import annotations

import base64
import csv
import json
import math
import re
import textwrap
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from azure.storage.blob import BlobServiceClient
from helpers import file_text, in_process, results_of, run_loadtest, run_locustfile

from loadtest.account.azurite import azurite_connection_string
from loadtest.account.blob_container import BLOB_API_VERSION
from loadtest.counting.buckets import UNATTRIBUTED
from loadtest.redact import AZURITE_KEY
from loadtest.service.log_forms import CLASSIC_FIELDS as FIELDS

#: the logged run and its replays are compared rate for rate: nothing runs beside them
pytestmark = pytest.mark.alone

#: Orders users on four keys, 70 % of their operations on one (read and upsert: every record names its partition),
#: and an inbox user whose inserts and batches name none; open loop (--arrival-rate 100 over 5 users: 20/s each), so
#: what the logs hold as demand is the schedule's, not what throttling let through. The emulator's 15 entities/s a
#: partition throttles the hot key, asked 56/s (well over its budget, not near it).
BUDGET = "15"
LOCUSTFILE = textwrap.dedent(
    """
    from loadtest import TableUser


    class Orders(TableUser):
        weight = 4
        key_strategy = "set:4"
        skew = "hotspot:70,25"
        mix = {"read": 70, "upsert": 30}


    class Inbox(TableUser):
        weight = 1
        partition_key = "inbox"
        mix = {"insert": 60, "batch": 40}
        batch_size = 5
        batch_mix = {"insert": 100}
    """
)


@pytest.fixture(scope="module")
def logged(azurite, tmp_path_factory) -> tuple[dict, Path]:
    """The run's results.json and the emulator's record of its requests. 8 s: the replay's check compares the seconds
    both ran whole, each edge worth up to a second of the 15/s budget; over a 4-s run that was 58 served against 67 on
    a slow machine, outside 15 % with the partition layer in agreement."""
    folder = tmp_path_factory.mktemp("logged")
    (folder / "locustfile.py").write_text(LOCUSTFILE)
    log = folder / "requests.json"
    results, _ = run_locustfile(
        folder / "locustfile.py", folder, azurite,
        *("-u", "5", "-r", "5", "-t", "8s", "--arrival-rate", "100", "--seed-entities", "40", "--emulate-throttling"),
        *("--emulator-partition-rate", BUDGET, "--emulator-burst", "0.5", "--request-log", str(log), "--no-report"),
    )  # fmt: skip
    return results, log


#: The checklist's findings whose evidence records carry (``traffic/workload``).
LOGGED_CHECKLIST = {"SCANS", "NO_PROJECTION", "APPEND_ONLY", "PREPEND_ONLY"}


def figures(results: dict) -> dict[tuple[str, str], tuple[int, int]]:
    """(requests, throttled attempts) per partition and op class."""
    return {
        (r["partition"], r["op_class"]): (r["requests"], r["throttled"]) for r in results["partitions"] if r["op_class"] != "ALL"
    }


def traffic(monkeypatch, tmp_path: Path, *sources: str, prefix: str = "", report: bool = True) -> tuple[dict, str]:
    """``loadtest traffic`` of ``sources`` in this process: its results and its console (``report``: draw report.html,
    where a test reads it)."""
    out = tmp_path / "traffic"
    chosen = [*(("--client-request-id", prefix) if prefix else ()), *(() if report else ("--no-report",))]
    code, stdout, stderr = in_process(monkeypatch, "traffic", *sources, "--out", str(out), "--overwrite", *chosen)
    assert code == 0 and "Traceback" not in stdout + stderr, stdout + stderr
    return json.loads((out / "results.json").read_text()), stdout


def test_the_records_say_what_the_run_counted(logged, tmp_path, monkeypatch):
    run, log = logged
    read, said = traffic(monkeypatch, tmp_path, str(log), prefix=f"{run['run']['id']}-")
    ran, logs = figures(run), figures(read)
    addressed = {key: value for key, value in ran.items() if key[0] != "inbox"}
    assert {key: logs[key] for key in addressed} == addressed  # every attributable partition and op class, exactly
    hot = max((p for p, _ in addressed), key=lambda p: sum(n for (q, _), (_, n) in addressed.items() if q == p))
    top = [p for p in run["keys"]["top"] if p != "inbox"]  # inbox (batches of 5) may take more entities: unattributed
    assert hot == top[0] and ran[(hot, "GET")][1] > 0  # the hot key, and it was throttled
    assert logs[(UNATTRIBUTED, "PUT")] == ran[("inbox", "PUT")]  # inserts and batches: their records name no partition
    assert read["logs"]["unattributed"].keys() == {"InsertEntity", "EntityGroupTransaction"}
    assert read["logs"]["requests"] == sum(n for n, _ in ran.values())
    hottest = [p for p in run["keys"]["top"] if p != "inbox"][:2]
    assert [p for p in read["keys"]["top"] if not p.startswith("#")][:2] == hottest
    assert read["run"]["target_kind"] == "logs" and read["logs"]["forms"] == {"diagnostic": read["logs"]["records"]}
    checklist = lambda results: {f["kind"] for f in results["findings"]} & LOGGED_CHECKLIST  # noqa: E731
    assert checklist(read) == checklist(run) == {"NO_PROJECTION"}  # its point reads, whole entities, in both
    verdict = (tmp_path / "traffic" / "report.html").read_text()
    assert "The account&#39;s request logs" in verdict and f"partition &#39;{hot}&#39; was throttled" in verdict, said


def _status_text(record: dict) -> str:
    """Storage Analytics' status message for a diagnostic record's answer."""
    status = record["statusCode"]
    if status == 503:
        return "ThrottlingError"
    if status == 500:
        return "ServerTimeoutError"
    return "Success" if status < 400 else "ClientOtherError"


def _analytics_row(record: dict) -> dict:
    p = record["properties"]
    return {
        "TimeGenerated": record["time"], "OperationName": record["operationName"], "StatusCode": str(record["statusCode"]),
        "StatusText": record["statusText"], "Uri": record["uri"], "ObjectKey": p["objectKey"],
        "DurationMs": record["durationMs"], "ServerLatencyMs": p["serverLatencyMs"], "RequestBodySize": p["requestBodySize"],
        "ResponseBodySize": p["responseBodySize"], "OperationCount": p["operationCount"], "ClientRequestId": p["clientRequestId"],
        "CorrelationId": record["correlationId"], "MetricResponseType": p["metricResponseType"], "Category": record["category"],
    }  # fmt: skip


#: How the classic form encodes a quoted field's characters (HTML entities).
ENCODED = {"&": "&amp;", '"': "&quot;", ";": "&#59;", "\n": "&#10;"}


def _classic_line(record: dict) -> str:
    p = record["properties"]
    quoted = lambda text: '"' + re.sub(r'[&";\n]', lambda m: ENCODED[m.group()], text) + '"'  # noqa: E731
    values = {
        "version": "1.0", "request-start-time": record["time"], "operation-type": record["operationName"],
        "request-status": _status_text(record), "http-status-code": str(record["statusCode"]),
        "end-to-end-latency-in-ms": str(record["durationMs"]), "server-latency-in-ms": str(p["serverLatencyMs"]),
        "authentication-type": "authenticated", "requester-account-name": "devstoreaccount1",
        "owner-account-name": "devstoreaccount1", "service-type": "table", "request-url": quoted(record["uri"]),
        "requested-object-key": quoted(p["objectKey"]), "request-id-header": record["correlationId"],
        "operation-count": "0", "requester-ip-address": record["callerIpAddress"], "request-version-header": "2019-02-02",
        "request-header-size": str(p["requestHeaderSize"]), "request-packet-size": str(p["requestBodySize"]),
        "response-header-size": str(p["responseHeaderSize"]),
        "response-packet-size": str(p["responseHeaderSize"] + p["responseBodySize"]),
        "request-content-length": str(p["requestBodySize"]), "user-agent-header": quoted('app "orders"; ' + p["userAgentHeader"]),
        "client-request-id": p["clientRequestId"],
    }  # fmt: skip
    return ";".join(values.get(name, "") for name in FIELDS) + "\n"


def _portal_time(logged: str) -> str:
    """A logged time as the portal's export writes it (``11/24/2026, 1:04:05.250 PM``: to the millisecond, cut)."""
    when = datetime.strptime(logged[:23], "%Y-%m-%dT%H:%M:%S.%f")
    hour = when.hour % 12 or 12
    return f"{when.month}/{when.day}/{when.year}, {hour}:{when:%M:%S}.{when.microsecond // 1000:03d} {when:%p}"


#: The columns of the portal's export in the test: a subset, in an order of the user's, the time named with its zone,
#: and a column the tool does not read.
PORTAL_COLUMNS = [
    "OperationName", "Uri", "TimeGenerated [UTC]", "StatusText", "StatusCode", "ClientRequestId", "DurationMs",
    "ResponseBodySize", "RequestBodySize", "MetricResponseType", "OperationCount", "TenantId",
]  # fmt: skip


def test_every_documented_form_of_the_same_records_says_the_same(logged, tmp_path, monkeypatch):
    """Log Analytics CSV and JSON, and the classic form quoted and HTML-encoded, with repeated records and lines that
    are no record mixed in: the same figures, the bad lines counted by why, no traceback. The portal's own CSV export
    (the time column named with its zone, the portal's times, a subset of the columns in another order, a byte-order
    mark, CRLF, newest first) and ``az monitor log-analytics query``'s JSON (every value a string): the same figures."""
    _, log = logged
    records = [json.loads(line) for line in log.read_text().splitlines()]
    rows = [_analytics_row(r) for r in records]
    with (tmp_path / "export.csv").open("w", newline="") as export:
        writer = csv.DictWriter(export, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        export.write("not a time,QueryEntity,200,Success,http://h/a/t,,,,,,,,,,\n")
    (tmp_path / "export.json").write_text(json.dumps([*rows, {"TimeGenerated": "2026-11-24T13:00:00Z"}], indent=1))
    with (tmp_path / "portal.csv").open("w", newline="", encoding="utf-8-sig") as export:  # the BOM; CRLF: csv's own
        writer = csv.writer(export)
        writer.writerow(PORTAL_COLUMNS)
        for row in reversed(rows):
            shown = {**row, "TimeGenerated [UTC]": _portal_time(row["TimeGenerated"]), "TenantId": "0000"}
            writer.writerow(["" if shown[c] is None else shown[c] for c in PORTAL_COLUMNS])
    az = [{"TableName": "PrimaryResult", **{k: "" if v is None else str(v) for k, v in row.items()}} for row in rows]
    (tmp_path / "az.json").write_text(json.dumps(az, indent=2))
    classic = [_classic_line(r) for r in records]
    mixed = classic[:10] + classic[:3] + ["1.0;a line;cut short\n"] + classic[10:]  # three repeated, one broken
    (tmp_path / "000000.log").write_text("".join(mixed))

    def demand(results: dict) -> Counter:  # each second's operations asked, by partition: at their first attempts
        return Counter({(r["second"], r["partition"]): r["offered"] for r in results["timeseries"] if r["offered"]})

    expected, _ = traffic(monkeypatch, tmp_path, str(log), report=False)
    asked = demand(results_of(tmp_path / "traffic"))
    for source, bad in (("export.csv", 1), ("export.json", 1), ("000000.log", 4), ("portal.csv", 0), ("az.json", 0)):
        read, said = traffic(monkeypatch, tmp_path, str(tmp_path / source), report=False)
        assert figures(read) == figures(expected), source
        if source == "portal.csv":  # newest first, counted in their order: a retried operation asked at its first
            assert demand(results_of(tmp_path / "traffic")) == asked
        assert sum(read["logs"]["unreadable"].values()) == bad and ("Unreadable:" in said) == bool(bad), (source, said)
    classic_read, _ = traffic(monkeypatch, tmp_path, str(tmp_path / "000000.log"), report=False)
    assert classic_read["logs"]["unreadable"]["a duplicate record (the same request id and operation count)"] == 3
    throttled_by = {r["partition"]: r["throttled_by"] for r in classic_read["partitions"] if r["throttled"]}
    assert all(set(by) == {"busy"} for by in throttled_by.values())  # classic records do not tell partition from account


def test_hashed_keys_leave_no_logged_key_and_no_signature_in_any_output(logged, tmp_path, monkeypatch):
    """--hash-keys: every PartitionKey a stable hash, in every output; a SAS signature in a logged URI (a record's, and a
    line that is no record) reaches none either way."""
    run, log = logged
    keys = {r["partition"] for r in run["partitions"]}
    signed = tmp_path / "signed.json"
    lines = log.read_text().splitlines()
    record = json.loads(lines[0])
    record["uri"] += "?sv=2019-02-02&sp=r&sig=LEAKED0SIGNATURE%3D"
    signed.write_text("\n".join([json.dumps(record), *lines[1:], "oops sig=LEAKED0SIGNATURE kept?"]) + "\n")
    for hashing in (True, False):
        out, profile = tmp_path / f"hashed-{hashing}", tmp_path / f"profile-{hashing}.json"
        code, stdout, stderr = in_process(
            monkeypatch, "traffic", str(signed), "--out", str(out), "--profile-out", str(profile),
            *(("--hash-keys",) if hashing else ()),
        )  # fmt: skip
        assert code == 0, stdout + stderr
        written = "".join(file_text(p) for p in [*out.iterdir(), profile]) + stdout + stderr
        assert "LEAKED0SIGNATURE" not in written
        if hashing:
            assert not [key for key in keys if key in written], keys
            again = json.loads((out / "results.json").read_text())
            assert again["logs"]["hashed_keys"] and all(p.startswith(("h", "#")) for p in again["keys"]["top"])


def test_the_query_that_exports_what_it_reads(monkeypatch):
    code, stdout, _ = in_process(monkeypatch, "traffic", "--kql", "--since", "2026-11-24T14:00:00Z")
    assert code == 0 and stdout.count("\n") == 6 and 'TimeGenerated >= todatetime("2026-11-24T14:00:00Z")' in stdout
    assert "| project TimeGenerated, OperationName, StatusCode" in stdout and "MetricResponseType" in stdout
    code, _, err = in_process(monkeypatch, "traffic", "--since", "yesterday", "x.json")
    assert code == 2 and err.count("\n") == 1 and "--since 'yesterday'" in err, err


def test_the_profile_replayed_at_scale_1_agrees_with_the_run_and_at_10x_names_the_hot_partition(
    logged, tmp_path, monkeypatch, artifacts
):
    """The logs' profile through the simulation with the run's budgets and retries: each throttled partition served
    as the run was in the seconds both ran whole (within 15 %) and throttled as it was (within 0.05 of its attempts);
    ten times the demand against a 100/s target makes the hot key HOT and no other.

    Served is compared within the schedule's seconds after its first: the run's first second is cut by its start (the
    replay takes each logged second whole, its burst full) and its last by its stop (Locust ends the retries still
    backing off; the replay lets them run out). Each edge is worth up to a second of the 15/s budget, which over the
    whole 7-s run was 102 served against 119 once, outside 15 % with the partition layer in full agreement."""
    run, log = logged
    profile = tmp_path / "traffic.json"
    code, stdout, stderr = in_process(
        monkeypatch, "traffic", str(log), "--out", str(tmp_path / "read"), "--profile-out", str(profile),
        "--client-request-id", f"{run['run']['id']}-", "--no-report",
    )  # fmt: skip
    assert code == 0 and f"Traffic profile: {profile}" in stdout, stdout + stderr
    budgets = ["--emulator-partition-rate", BUDGET, "--emulator-burst", "0.5", "--retry", run["run"]["settings"]["retry"]]
    replayed = {}
    for scale in ("1", "10"):
        out = tmp_path / f"x{scale}"
        code, stdout, stderr = in_process(
            monkeypatch, "simulate", "--traffic", str(profile), "--scale", scale, "--unattributed", "apart",
            "--partition-target", "100", *budgets, "--out", str(out), *(() if scale == "10" else ("--no-report",)),
        )  # fmt: skip
        assert code in (0, 3), stdout + stderr
        replayed[scale] = results_of(out)
    scheduled = sorted({row["second"] for row in run["timeseries"] if row["offered"]})
    whole = set(scheduled[1:])  # the seconds both the run and the replay ran whole
    assert len(whole) >= 3, scheduled

    def served(results: dict, partition: str) -> int:
        return sum(r["entities"] for r in results["timeseries"] if r["partition"] == partition and r["second"] in whole)

    ran = {  # each throttled partition, its GETs and PUTs together (they share its budget)
        (r["partition"], r["op_class"]): r
        for r in run["partitions"]
        if r["throttled"] and r["partition"] != "inbox" and r["op_class"] == "ALL"
    }
    sim = {(r["partition"], r["op_class"]): r for r in replayed["1"]["partitions"]}
    assert ran and replayed["1"]["simulation"]["traffic"]["scale"] == 1, replayed["1"]["simulation"]
    side_by_side = {}
    for key, real in ran.items():
        share = [r["throttled"] / r["attempts"] for r in (real, sim[key])]
        side_by_side[key] = (served(run, key[0]), served(replayed["1"], key[0]), *share, real["attempts"])
    for real_entities, sim_entities, real_share, sim_share, attempts in side_by_side.values():
        assert sim_entities == pytest.approx(real_entities, rel=0.15), side_by_side
        # within 5 points, or 3 standard errors of the run's share over its attempts: a cold key (some 8/s against
        # the 15/s budget's 7.5-entity burst) has a few attempts throttled in a real run, where five users' random
        # picks of it collide within half a second (3 of 70, 1 of 50, 2 of 69 on a green clone; 4 of 71 failed the 5
        # points on another), and none in the simulation, whose constant arrivals spread each key's share evenly
        se = math.sqrt(max(real_share * (1 - real_share), sim_share * (1 - sim_share)) / attempts)
        assert abs(sim_share - real_share) <= max(0.05, 3 * se), side_by_side
    (artifacts / "replay-vs-run.json").write_text(json.dumps({"/".join(k): v for k, v in side_by_side.items()}, indent=1))
    hot = {f["partition"] for f in replayed["10"]["findings"] if f["kind"] == "HOT"}
    assert hot == {next(p for p in run["keys"]["top"] if p != "inbox")}, replayed["10"]["findings"]  # inbox: unattributed
    said = (tmp_path / "x10" / "report.html").read_text()
    assert "Production traffic from the logs" in said and "replayed at 10x" in said


def test_the_same_records_read_where_a_diagnostic_setting_archives_them(logged, azurite, blob_service, tmp_path, monkeypatch):
    """--from-container through Azurite's blob service: the hour's PT1H.json gives the figures the file gives; the blob
    service's own logs beside it and an hour outside --since are passed by (both garbage: read, they would count as
    unreadable); a missing container and refused credentials are one line each, the key in neither."""
    run, log = logged
    first = min(json.loads(line)["time"] for line in log.read_text().splitlines())
    hour = datetime.fromisoformat(first.replace("Z", "+00:00")).replace(minute=0, second=0, microsecond=0)
    account = "resourceId=/subscriptions/s/resourceGroups/g/providers/Microsoft.Storage/storageAccounts/devstoreaccount1"
    at = f"y={hour:%Y}/m={hour:%m}/d={hour:%d}/h={hour:%H}/m=00/PT1H.json"
    connection = azurite_connection_string(azurite.port, blob_port=blob_service.port)
    container = BlobServiceClient.from_connection_string(connection, api_version=BLOB_API_VERSION).create_container(
        "insights-logs-storageread"
    )
    container.upload_blob(f"{account}/tableServices/default/{at}", log.read_bytes())
    container.upload_blob(f"{account}/blobServices/default/{at}", b"not a table record\n")
    container.upload_blob(f"{account}/tableServices/default/y=2020/m=01/d=01/h=00/m=00/PT1H.json", b"an old hour\n")
    env = {"AZURE_STORAGE_CONNECTION_STRING": connection}
    since = ("--since", f"{hour:%Y-%m-%dT%H:%M:%SZ}", "--client-request-id", f"{run['run']['id']}-")
    from_files, _ = traffic(monkeypatch, tmp_path, str(log), prefix=f"{run['run']['id']}-", report=False)
    out = tmp_path / "from-container"
    code, stdout, stderr = in_process(
        monkeypatch,
        "traffic",
        "--from-container",
        "insights-logs-storageread",
        *since,
        "--out",
        str(out),
        "--no-report",
        env=env,
    )
    assert code == 0 and "Unreadable" not in stdout, stdout + stderr
    assert "Read 1 log blobs from insights-logs-storageread; passed by 1 of another service; passed by 1 outside" in stdout
    from_blobs = json.loads((out / "results.json").read_text())
    assert figures(from_blobs) == figures(from_files) and from_blobs["logs"]["requests"] == from_files["logs"]["requests"]
    code, _, err = in_process(monkeypatch, "traffic", "--from-container", "insights-logs-storagewrite", env=env)
    assert code == 2 and err.count("\n") == 1 and "has no container 'insights-logs-storagewrite'" in err, err
    refused = connection.replace(AZURITE_KEY, base64.b64encode(b"not the key").decode())
    code, _, err = in_process(
        monkeypatch, "traffic", "--from-container", "insights-logs-storageread", env={"AZURE_STORAGE_CONNECTION_STRING": refused}
    )
    assert code == 1 and err.count("\n") == 1 and "refused the credentials (403)" in err and "bm90IHRoZSBrZXk" not in err, err


def test_the_logs_profile_replayed_by_a_real_run_asks_each_partition_what_the_logged_run_asked(
    logged, azurite, tmp_path, monkeypatch
):
    """Production -> profile -> a real run at N x: the run's own logs as a profile, replayed against a test table by
    real Locust users at half the logged peak. Each logged partition gets its share of the reads, the hottest stays
    hottest, every read finds an entity (seeded to match), and the run's settings say the profile ran."""
    logged_run, log = logged
    profile = tmp_path / "traffic.json"
    code, out, err = in_process(
        monkeypatch, "traffic", str(log), "--client-request-id", f"{logged_run['run']['id']}-",
        "--profile-out", str(profile), "--out", str(tmp_path / "read"), "--no-report",
    )  # fmt: skip
    assert code == 0, out + err
    peak = json.loads(profile.read_text())["rate"]
    out = tmp_path / "replay"
    done = run_loadtest(
        "run", "--traffic", str(profile), "--scale", "0.5", "-t", "6s", "-r", "50",
        "--out", str(out), "--no-report", "--connection-string", azurite.connection_string,
    )  # fmt: skip
    assert done.code == 0 and "Traceback" not in done.output, done.output
    replay = results_of(out)
    settings = replay["run"]["settings"]
    assert settings["key_strategy"] == f"traffic:{profile}:spread"
    assert {part.split("=")[0] for part in settings["mix"].split(",")} == {"read", "upsert", "insert", "batch"}
    assert settings["arrival_rate"] == pytest.approx(0.5 * max(peak["requests"]) / peak["bin_s"], rel=0.01)

    def shares(results: dict) -> dict[str, float]:
        reads = {r["partition"]: r["requests"] for r in results["partitions"] if r["op_class"] == "GET"}
        reads = {p: n for p, n in reads.items() if p != "inbox" and not p.startswith("#")}
        return {p: n / sum(reads.values()) for p, n in reads.items()}

    logged_shares, replayed = shares(logged_run), shares(replay)
    assert replayed.keys() == logged_shares.keys(), (replayed, logged_shares)
    for partition, share in logged_shares.items():
        assert replayed[partition] == pytest.approx(share, abs=0.12), (partition, replayed, logged_shares)
    assert max(replayed, key=replayed.get) == max(logged_shares, key=logged_shares.get)
    missing = sum(r["errors"].get("ResourceNotFound", 0) for r in replay["partitions"])
    assert missing == 0 and replay["arrivals"]["served_per_s"] > 0
