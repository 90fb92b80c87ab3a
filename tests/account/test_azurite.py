"""The embedded Azurite: a child process on a free loopback port, stopped by PID."""

import os

import pytest

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.account.endpoint import resolve_target
from loadtest.exit_codes import RunError
from loadtest.testbed.table import TestTable


def test_embedded_azurite_starts_answers_and_stops_by_pid():
    server = EmbeddedAzurite().start()
    pid = server.pid
    os.kill(pid, 0)  # running
    target = resolve_target(connection_string=server.connection_string)
    TestTable.open(target).drop()
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_no_node_says_how_to_get_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RunError, match="needs Node.js 18\\+ and npm"):
        EmbeddedAzurite().start()
