"""Locust master + workers against a real Azurite: seeded once, merged exactly, lost workers named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from loadtest.azurite import free_port
from loadtest.table import TestTable

WORKLOAD = ("--mix", "insert=50,batch=50", "--batch-size", "10", "--seed-entities", "200")


@pytest.mark.parametrize("client", ["fast", "sdk"])
def test_master_and_two_workers_merge_exactly_what_was_written(loadtest, azurite, target, tmp_path, client):
    stats_file = tmp_path / "locust-stats.json"  # Locust's --json-file adds the .json itself
    done = loadtest(
        "run",
        "--client",
        client,
        "--workers",
        "2",
        "-t",
        "6s",
        "-u",
        "4",
        "-r",
        "4",
        *WORKLOAD,
        "--keep-table",
        "--out",
        str(tmp_path / "out"),
        "--connection-string",
        azurite.connection_string,
        "--json-file",
        str(stats_file.with_suffix("")),
    )
    assert done.code == 0, done.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(results["workers"]["reported"]) == 2 and results["workers"]["lost"] == []
    assert done.output.count("Seeding 200 entities") == 1  # on the master only
    assert done.output.count("Worker joined the run") == 2
    (put,) = [row for row in results["partitions"] if row["op_class"] == "PUT"]
    table = TestTable(target=target, name=results["run"]["table"], created=True)
    try:
        assert table.count("hot") - 200 == put["entities"] > 0
    finally:
        table.drop()
    # every bucket once: the per-second rows add up to the totals, and to Locust's own request count
    assert sum(row["entities"] for row in results["timeseries"]) == put["entities"]
    assert sum(row["requests"] for row in results["timeseries"]) == put["requests"]
    locust_requests = sum(entry["num_requests"] for entry in json.loads(stats_file.read_text()))
    assert put["requests"] == locust_requests


def test_a_killed_worker_is_named_and_the_master_carries_on(azurite, tmp_path):
    port = free_port()
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    locust = [sys.executable, "-m", "locust", "-f", "loadtest/locustfile.py"]
    master_log = tmp_path / "master.log"
    children: list[subprocess.Popen] = []

    def start(args, log):
        with log.open("w") as out:
            child = subprocess.Popen(
                locust + args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        children.append(child)
        return child

    try:
        master = start(
            [
                "--master",
                "--headless",
                "--expect-workers",
                "2",
                "-u",
                "4",
                "-r",
                "4",
                "-t",
                "16s",
                "--master-bind-host",
                "127.0.0.1",
                "--master-bind-port",
                str(port),
                *WORKLOAD,
                "--out",
                str(tmp_path / "out"),
            ],
            master_log,
        )
        workers = [
            start(["--worker", "--master-host", "127.0.0.1", "--master-port", str(port)], tmp_path / f"w{i}.log")
            for i in range(2)
        ]
        deadline = time.monotonic() + 60
        while "All users spawned" not in master_log.read_text():
            assert time.monotonic() < deadline and master.poll() is None, master_log.read_text()
            time.sleep(0.2)
        time.sleep(4)
        workers[0].send_signal(signal.SIGKILL)
        master.wait(timeout=90)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)
    assert master.returncode == 0, master_log.read_text()
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (lost,) = results["workers"]["lost"]
    assert lost["worker"] in results["workers"]["reported"]
    assert 4 <= lost["lost_at_s"] <= 14
    finding = next(f for f in results["findings"] if f["kind"] == "WORKER_LOST")
    assert lost["worker"] in finding["message"] and "lack its share" in finding["message"]
    # the survivor's share goes on after the loss: the report covers the whole run
    late = [row for row in results["timeseries"] if row["t"] > lost["lost_at_s"] + 2]
    assert sum(row["entities"] for row in late) > 0
    report = (tmp_path / "out" / "report.html").read_text()
    assert lost["worker"] in report and "WORKER_LOST" in report and report.count("data:image/png") == 5


@pytest.mark.parametrize("strategy", ["guid", "hash-prefix:16"])
def test_users_on_different_workers_draw_different_key_sequences(loadtest, azurite, target, tmp_path, strategy):
    """One user on each of two workers: each draws its own PartitionKeys (they once shared one stream)."""
    done = loadtest(
        "run",
        "--workers",
        "2",
        "-t",
        "4s",
        "-u",
        "2",
        "-r",
        "2",
        "--key-strategy",
        strategy,
        "--mix",
        "insert=1",
        "--seed-entities",
        "16",
        "--keep-table",
        "--skip-verify",
        "--out",
        str(tmp_path),
        "--connection-string",
        azurite.connection_string,
    )
    assert done.code == 0, done.output
    assert done.output.count("Worker joined the run") == 2
    table = TestTable(target=target, name=json.loads((tmp_path / "results.json").read_text())["run"]["table"], created=True)
    try:
        rows = table.keys()
    finally:
        table.drop()
    sequences: dict[str, list[tuple[int, str]]] = {}
    for pk, rk in rows:
        if rk.startswith("u"):  # a user's insert: u<user>-<n>; seeded rows are not
            user, _, n = rk.partition("-")
            sequences.setdefault(user, []).append((int(n), pk))
    assert len(sequences) == 2, sequences.keys()
    first, second = ([pk for _, pk in sorted(seq)] for seq in sequences.values())
    length = min(len(first), len(second))
    assert length >= 5, (len(first), len(second))
    assert first[:length] != second[:length]
    if strategy == "guid":
        assert not set(first) & set(second)
