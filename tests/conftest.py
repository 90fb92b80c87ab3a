"""Fixtures: a real Azurite (in memory, loopback, a free port) for the session, fresh tables, and the tool run as a
user runs it (the helpers themselves are in ``helpers``)."""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()  # first, as Locust does on import: the tests run Locust in-process, and ssl must not be imported before

import socket  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from helpers import ARTIFACTS, SHORT, run_loadtest  # noqa: E402

from loadtest.azurite import EmbeddedAzurite  # noqa: E402
from loadtest.table import TestTable  # noqa: E402
from loadtest.target import Target, resolve_target  # noqa: E402


@pytest.fixture(scope="session")
def azurite():
    """One Azurite table service for the session, stopped by PID at the end."""
    with EmbeddedAzurite() as server:
        yield server
    assert server.process is None


@pytest.fixture(scope="session")
def blob_service():
    """Azurite's blob service beside the table service (where engines hand their outputs over), stopped by PID."""
    with EmbeddedAzurite(service="blob") as server:
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


@pytest.fixture
def loadtest():
    return run_loadtest


@pytest.fixture(scope="session")
def measured_run(azurite, tmp_path_factory) -> Path:
    """One short run of the default job against the session's Azurite, as a user runs it: its folder, which several
    tests read (copy it before changing it)."""
    out = tmp_path_factory.mktemp("measured-run")
    done = run_loadtest("run", *SHORT, "--out", str(out), "--connection-string", azurite.connection_string)
    assert done.code == 0, done.output
    return out
