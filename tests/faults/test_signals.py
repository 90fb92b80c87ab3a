"""Ctrl-C and SIGTERM at every phase before the load: a clean stop, nothing left behind, exit 1."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import ROOT, tables

from loadtest.account.azurite import azurite_connection_string
from loadtest.child_process import free_port


class Watched:
    """The tool in a child process, its output read as it comes."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        child_env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
        self.child = subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            env={**child_env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.child.stdout), daemon=True)
        self.reader.start()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if text in line:
                    return line
            assert self.child.poll() is None, self.output
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} in {self.output}")

    def stop(self, signum: int, timeout: float = 30) -> tuple[int, float]:
        """Send ``signum``; the exit code and the seconds it took to exit."""
        sent = time.monotonic()
        self.child.send_signal(signum)
        try:
            code = self.child.wait(timeout=timeout)
        finally:
            if self.child.poll() is None:
                self.child.kill()
        self.reader.join(timeout=5)
        return code, time.monotonic() - sent


def azurite_pids() -> set[int]:
    found = subprocess.run(["pgrep", "-f", "azurite-table"], capture_output=True, text=True).stdout
    return {int(pid) for pid in found.split()}


def assert_one_clean_line(watched: Watched, phase: str, signame: str) -> str:
    assert "Traceback" not in watched.output, watched.output
    (line,) = [line for line in watched.lines if line.startswith("loadtest: error:")]
    assert f"interrupted ({signame}) {phase}: nothing was measured" in line, line
    return line


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_stopped_while_seeding_drops_the_table(azurite, target, signum):
    before = tables(target)
    watched = Watched(
        ["-m", "loadtest", "run", "-t", "5s", "--seed-entities", "400000", "--connection-string", azurite.connection_string]
    )
    name = re.search(r"Test table (\w+)", watched.wait_for("Test table")).group(1)
    watched.wait_for("Seeding")
    time.sleep(1)
    code, took = watched.stop(signum)
    assert code == 1 and took < 15, (code, took, watched.output)
    line = assert_one_clean_line(watched, "while seeding", signum.name)
    assert f"test table {name} dropped" in line
    assert tables(target) == before


def test_stopped_while_seeding_an_embedded_azurite_stops_it():
    """The tool's own Azurite, by the PID it logs (another one on the machine, a test's or a user's, is not its own:
    counting every Azurite once failed a fresh clone's suite while another run started one)."""
    watched = Watched(["-m", "loadtest", "run", "-t", "5s", "--seed-entities", "400000"])
    pid = int(re.search(r"\(pid (\d+)\)", watched.wait_for("Azurite table service on")).group(1))
    watched.wait_for("Seeding")
    assert running(pid)
    code, took = watched.stop(signal.SIGINT)
    assert code == 1 and took < 15, (code, took, watched.output)
    line = assert_one_clean_line(watched, "while seeding", "SIGINT")
    assert "dropped, Azurite stopped" in line
    assert not running(pid)


@pytest.mark.alone  # it counts every Azurite on the machine, the other test process's too
def test_stopped_while_azurite_starts_leaves_no_azurite(tmp_path: Path):
    """A real Azurite made slow to start (a busy-wait preloaded into node), stopped before it answers."""
    slow = tmp_path / "slow-start.js"
    slow.write_text("const until = Date.now() + 4000; while (Date.now() < until) {}\n")
    before = azurite_pids()
    watched = Watched(["-m", "loadtest", "run", "-t", "5s"], env={"NODE_OPTIONS": f"--require {slow}"})
    watched.wait_for("Target: an embedded Azurite")
    time.sleep(1)
    code, took = watched.stop(signal.SIGINT)
    assert code == 1 and took < 10, (code, took, watched.output)
    line = assert_one_clean_line(watched, "while starting Azurite", "SIGINT")
    assert line.rstrip().endswith("Azurite stopped")
    assert azurite_pids() == before


def test_stopped_while_creating_the_table_stops_the_emulator(silent_port):
    """A table service that never answers: create_table hangs (within --timeout), the emulator in front of it runs."""
    watched = Watched(
        ["-m", "loadtest", "run", "-t", "5s", "--emulate-throttling", "--timeout", "60"]
        + ["--connection-string", azurite_connection_string(silent_port)]
    )
    pid = int(re.search(r"\(pid (\d+)\)", watched.wait_for("Throttling emulator on")).group(1))
    time.sleep(1)
    code, took = watched.stop(signal.SIGTERM)
    assert code == 1 and took < 5 + 5 + 3, (code, took, watched.output)
    line = assert_one_clean_line(watched, "while creating the test table", "SIGTERM")
    assert "throttling emulator stopped" in line and f"(pid {pid}) stopped" in watched.output
    assert "NOT dropped (delete it by hand)" in line  # the service never answered: whether it made the table is unknown
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_stopped_while_a_headless_master_waits_for_workers_drops_the_table(azurite, target):
    """Set-up is done and Locust waits for a worker that never comes: Locust has no SIGTERM handler yet."""
    before = tables(target)
    watched = Watched(
        ["-m", "locust", "-f", "loadtest/locustfile.py", "--headless", "-t", "5s", "--master", "--expect-workers", "1"]
        + ["--master-bind-host", "127.0.0.1", "--master-bind-port", str(free_port())]
        + ["--seed-entities", "100", "--connection-string", azurite.connection_string, "--loglevel", "DEBUG"]
    )
    name = re.search(r"Test table (\w+)", watched.wait_for("Test table")).group(1)
    watched.wait_for("Seeding")
    watched.wait_for("Waiting for workers to be ready")  # Locust's own line, at DEBUG for its first 5 s
    code, took = watched.stop(signal.SIGINT)
    assert code == 1 and took < 10, (code, took, watched.output)
    line = assert_one_clean_line(watched, "before the load started", "SIGINT")
    assert f"test table {name} dropped" in line
    assert tables(target) == before


def test_the_tool_killed_mid_run_leaves_no_azurite_or_emulator():
    """SIGKILL runs no handler: the embedded Azurite and the emulator go by the parent-death signal each was started
    with, checked by their PIDs until both are gone, for at most 5 s."""
    watched = Watched(["-m", "loadtest", "run", "-t", "30s", "--seed-entities", "100", "--emulate-throttling"])
    pids = [
        int(re.search(r"\(pid (\d+)\)", watched.wait_for(f"{name} on")).group(1))
        for name in ("Azurite table service", "Throttling emulator")
    ]
    watched.wait_for("All users spawned")
    code, _ = watched.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while [pid for pid in pids if running(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in pids if running(pid)] == [], (pids, watched.output[-2000:])


def running(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


@pytest.mark.alone
def test_a_saturated_open_loop_sigtermed_writes_its_outputs_and_exits_within_5_s(azurite, target, tmp_path: Path):
    """An open loop far past what the machine can send (its users drop slots every second): SIGTERM mid-load still
    ends the run within 5 s, with results.json, timeseries.csv and report.html written and the table dropped (on the
    session's Azurite, where the table can be looked for: the embedded one's stop is test_cli's)."""
    before, out = tables(target), tmp_path / "out"
    watched = Watched(
        ["-m", "loadtest", "run", "-t", "60s", "-u", "10", "-r", "10", "--arrival-rate", "9000", "--mix", "read=100"]
        + ["--seed-entities", "100", "--out", str(out), "--connection-string", azurite.connection_string]
    )
    watched.wait_for("All users spawned")
    time.sleep(3)
    code, took = watched.stop(signal.SIGTERM)
    assert took < 5, (took, watched.output[-2000:])
    assert "Traceback" not in watched.output
    assert {p.name for p in out.iterdir()} >= {"results.json", "timeseries.csv", "report.html"}, watched.output[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["arrivals"]["dropped"] > 0 and results["run"]["duration_s"] < 15  # saturated, and stopped early
    assert code in (0, 3), watched.output[-2000:]
    assert tables(target) == before
