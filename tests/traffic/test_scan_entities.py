"""A query's entities read from the logs as the run counted them (issue #64): a run's own ``--request-log`` holds
its scans' answers in bytes, and ``traffic`` divides them by an entity's size in a query's answer as the same logs'
point reads carry it (less the metadata member that names the table), not by ``--entity-bytes``' guess of 1,024: the
run's 5,000 scanned rows were 31 % fewer read back at 1,024 bytes an entity, where its answers held 648."""

from __future__ import annotations

import json

import pyarrow as pa
from helpers import in_process, run_loadtest

from loadtest.traffic.attribution import attribute, query_entity_bytes


def test_traffic_of_a_runs_own_request_log_counts_its_scanned_entities_within_5_percent(azurite, monkeypatch, tmp_path):
    log = tmp_path / "requests.json"
    done = run_loadtest(
        "run", "-t", "4s", "-u", "2", "-r", "2", "--rate", "10", "--mix", "read=50,scan=30,upsert=20",
        "--seed-entities", "400", "--emulate-throttling", "--request-log", str(log), "--out", str(tmp_path / "run"),
        "--no-report", "--connection-string", azurite.connection_string,
    )  # fmt: skip
    assert done.code == 0, done.output
    run = json.loads((tmp_path / "run" / "results.json").read_text())
    code, stdout, stderr = in_process(monkeypatch, "traffic", str(log), "--out", str(tmp_path / "read"), "--no-report")
    assert code == 0, stdout + stderr
    read = json.loads((tmp_path / "read" / "results.json").read_text())
    ran = {(r["partition"], r["op_class"]): r for r in run["partitions"] if r["op_class"] != "ALL"}
    logged = {(r["partition"], r["op_class"]): r for r in read["partitions"] if r["op_class"] != "ALL"}
    scans = next(n for n in run["workload"]["names"] if n["name"] == "GET row range scan")
    assert scans["requests"] > 0 and scans["scanned"] >= 50 * scans["requests"]  # scans that read rows: most of GET
    for key, row in ran.items():
        assert logged[key]["requests"] == row["requests"], key  # requests exact
        assert abs(logged[key]["entities"] - row["entities"]) <= 0.05 * row["entities"], (key, logged[key], row)


def test_a_block_without_point_reads_uses_the_size_measured_before_then_the_guess():
    """A block of query answers alone: the size the reader measured in earlier blocks, else ``--entity-bytes``."""
    uri = "https://acct.table.core.windows.net:443/orders()?$filter=PartitionKey%20eq%20'a'"
    block = pa.table(
        {
            "operation": ["QueryEntities"], "uri": [uri], "object_key": ["/acct/orders"], "status": [200],
            "response_body": [65_000], "request_body": [0],
        }
    )  # fmt: skip
    assert query_entity_bytes(block) == (0, 0)
    assert attribute(block, 1024, 650)["entities"].to_pylist() == [100]
    assert attribute(block, 1300)["entities"].to_pylist() == [50]
    point = "https://acct.table.core.windows.net:443/orders(PartitionKey='a',RowKey='r1')"
    metadata = len('{"odata.metadata":"https://acct.table.core.windows.net/$metadata#orders/@Element",}')
    both = pa.concat_tables(
        [
            block,
            block.set_column(0, "operation", pa.array(["QueryEntity"]))
            .set_column(1, "uri", pa.array([point]))
            .set_column(4, "response_body", pa.array([650 + metadata + 4])),
        ]
    )
    assert query_entity_bytes(both) == (
        650,
        1,
    )  # less its metadata member (4 bytes off: the log's ':443', which the answer's address lacks)
    assert attribute(both, 1024, 2000)["entities"].to_pylist() == [100, 1]
