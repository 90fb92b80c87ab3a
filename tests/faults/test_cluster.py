"""Master and workers killed through Locust's real runners: the survivors stop or carry on, and say so."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers import ROOT, WORKLOAD, series_of

from loadtest.child_process import free_port
from loadtest.testbed.table import TestTable

#: A master's word that its users are spawned: Locust's, or, when a worker's report comes later than it waits for (a
#: busy machine), that it stopped waiting; either way the users run.
SPAWNED = ("All users spawned", "Spawning is complete and report waittime is expired")


class Cluster:
    """A Locust master and its workers in child processes, each logging to its own file."""

    def __init__(self, tmp_path: Path, connection_string: str) -> None:
        self.tmp_path, self.port = tmp_path, free_port()
        self.env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": connection_string}
        self.children: dict[str, subprocess.Popen] = {}

    def start(self, args: list[str], name: str) -> subprocess.Popen:
        with (self.tmp_path / f"{name}.log").open("w") as out:
            child = subprocess.Popen(
                [sys.executable, "-m", "locust", "-f", "loadtest/locustfile.py", *args],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        self.children[name] = child
        return child

    def log(self, name: str) -> str:
        return (self.tmp_path / f"{name}.log").read_text()

    def master(self, *args: str) -> subprocess.Popen:
        bind = ["--master-bind-host", "127.0.0.1", "--master-bind-port", str(self.port)]
        return self.start(["--master", "--headless", "--expect-workers", "2", *bind, *args], "master")

    def workers(self, count: int = 2) -> list[subprocess.Popen]:
        connect = ["--worker", "--master-host", "127.0.0.1", "--master-port", str(self.port)]
        return [self.start(connect, f"w{i}") for i in range(count)]

    def wait_for(self, text: str | tuple[str, ...], name: str = "master", timeout: float = 60) -> None:
        """Until ``name``'s log says ``text`` (or one of them): it fails if ``name`` ends or ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        said = (text,) if isinstance(text, str) else text
        while not any(one in self.log(name) for one in said):
            assert time.monotonic() < deadline and self.children[name].poll() is None, self.log(name)
            time.sleep(0.2)

    def stop(self) -> None:
        for child in self.children.values():
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)


def test_workers_stop_loading_within_10_s_of_losing_their_master(azurite, target, tmp_path):
    cluster = Cluster(tmp_path, azurite.connection_string)
    try:
        master = cluster.master("-u", "4", "-r", "4", "-t", "60s", "--rate", "25", "--mix", "insert=1", "--seed-entities", "10")
        cluster.workers()
        cluster.wait_for(SPAWNED)
        table = TestTable(target=target, name=re.search(r"Test table (\w+)", cluster.log("master")).group(1), created=True)
        deadline = time.monotonic() + 30
        while table.count("hot") <= 10:  # the workers' inserts have landed beside the 10 seeded rows: the load is on
            assert time.monotonic() < deadline, cluster.log("master")
            time.sleep(0.1)
        master.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        for name in ("w0", "w1"):  # each says it stopped its users, within 10 s of the loss
            cluster.wait_for("no answer from the master", name, timeout=10 - (time.monotonic() - killed))
        # operations already sent when the users stopped may still land (the service answers what it was sent): the
        # count settles, bounded; a worker still loading would add rows every tenth of a second and never settle
        stopped, deadline = table.count("hot"), time.monotonic() + 5
        while True:
            time.sleep(0.5)
            if (now := table.count("hot")) == stopped:
                break
            assert time.monotonic() < deadline, f"the workers kept writing: {stopped} then {now} rows"
            stopped = now
        time.sleep(2)
        assert table.count("hot") == stopped > 10  # and nothing is written once they have said so
    finally:
        cluster.stop()
        table.drop()


def test_a_killed_worker_is_named_and_the_master_carries_on(azurite, tmp_path):
    cluster = Cluster(tmp_path, azurite.connection_string)
    try:
        # 50 operations/s a user: rows enough to read back in a second, not the 150,000 of a closed loop
        master = cluster.master("-u", "4", "-r", "4", "-t", "12s", "--rate", "50", *WORKLOAD, "--out", str(tmp_path / "out"))
        workers = cluster.workers()
        cluster.wait_for(SPAWNED)
        time.sleep(3)
        workers[0].send_signal(signal.SIGKILL)
        master.wait(timeout=90)
    finally:
        cluster.stop()
    assert master.returncode == 0, cluster.log("master")
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (lost,) = results["workers"]["lost"]
    assert lost["worker"] in results["workers"]["reported"] and lost["index"] in (0, 1)
    assert 4 <= lost["lost_at_s"] <= 12
    # its writes that landed but whose ledger never came are its own, not the service's unconfirmed writes
    assert results["integrity"]["by_lost_workers"] > 0 and results["integrity"]["unacknowledged"] == 0
    assert results["integrity"]["lost"] == 0
    # the lost worker's seconds are not read as the emulator saturating; Azurite measured at a core may be named
    bound = [f["message"] for f in results["findings"] if f["kind"] == "EMULATOR_BOUND"]
    assert all(m.startswith("Azurite used") and "of a core" in m for m in bound), bound
    finding = next(f for f in results["findings"] if f["kind"] == "WORKER_LOST")
    assert lost["worker"] in finding["message"] and "lack its share" in finding["message"]
    # the survivor's share goes on after the loss: the report covers the whole run
    late = [row for row in series_of(tmp_path / "out") if row["t"] > lost["lost_at_s"] + 2]
    assert sum(row["entities"] for row in late) > 0
    report = (tmp_path / "out" / "report.html").read_text()
    assert lost["worker"] in report and "WORKER_LOST" in report and report.count("data:image/svg+xml") == 5
