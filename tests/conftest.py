"""Fixtures: a real Azurite (in memory, loopback, a free port), and the tool run as a user runs it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from loadtest.azurite import EmbeddedAzurite
from loadtest.table import TestTable
from loadtest.target import Target, resolve_target

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def azurite():
    """One Azurite table service for the session, stopped by PID at the end."""
    with EmbeddedAzurite() as server:
        yield server
    assert server.process is None


@pytest.fixture(scope="session")
def target(azurite) -> Target:
    return resolve_target(connection_string=azurite.connection_string)


@pytest.fixture
def table(target):
    """A fresh test table, deleted afterwards."""
    created = TestTable.open(target)
    yield created
    created.drop()


@pytest.fixture
def silent_port():
    """A loopback port something listens on and never answers: the kernel accepts its connections, nobody reads."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield listener.getsockname()[1]


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_loadtest(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Finished:
    """``python -m loadtest ARGS`` in a child process, as a user would run it (bounded in time)."""
    child_env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
    child_env.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "loadtest", *args],
        cwd=ROOT,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Finished(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def loadtest():
    return run_loadtest


def run_with_azurite_frozen(azurite: EmbeddedAzurite, args: list[str], *, at: float, thaw_after: float | None = None) -> Finished:
    """``python -m loadtest ARGS`` while ``azurite`` is frozen (SIGSTOP) ``at`` seconds in, thawed ``thaw_after`` seconds
    later (else once the run ended): it keeps accepting connections and answers none. Thawed, and the child killed,
    whatever happens."""
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        time.sleep(at)
        azurite.process.send_signal(signal.SIGSTOP)
        if thaw_after is not None:
            time.sleep(thaw_after)
            azurite.process.send_signal(signal.SIGCONT)
        stdout, stderr = child.communicate(timeout=90)
    finally:
        azurite.process.send_signal(signal.SIGCONT)
        if child.poll() is None:
            child.kill()
    return Finished(child.returncode, stdout, stderr)


def run_locustfile(locustfile: Path, tmp_path: Path, azurite: EmbeddedAzurite, *args: str) -> tuple[dict, list[dict]]:
    """``locust -f locustfile --headless ARGS`` against the fixture's Azurite: results.json and Locust's own stats."""
    stats = tmp_path / "stats"
    done = subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "--out", str(tmp_path / "out")]
        + ["--json-file", str(stats), *args],
        cwd=ROOT,
        env={**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((tmp_path / "out" / "results.json").read_text()), json.loads(stats.with_suffix(".json").read_text())


@contextmanager
def web_ui_process(args: list[str], *, port: int, env: dict[str, str], log: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """``python ARGS`` serving a web UI on ``port``: (the child, its URL) once ``/`` answers; then stopped by PID with
    SIGTERM (Locust's own path: report, cleanup), killed if it has not exited within 60 s."""
    with log.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert child.poll() is None and time.monotonic() < deadline, log.read_text()
            try:
                urllib.request.urlopen(url + "/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        yield child, url
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)
