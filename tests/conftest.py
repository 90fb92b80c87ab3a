"""Fixtures: a real Azurite (in memory, loopback, a free port) for the session, fresh tables, and the tool run as a
user runs it (the helpers themselves are in ``helpers``)."""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()  # first, as Locust does on import: the tests run Locust in-process, and ssl must not be imported before

import socket  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

#: The suite's folders mirror the package's wings; a test may take a helper from another folder's module by its name
#: (``from test_results import engine_results``), so every folder is on the path whichever is collected first.
sys.path += [str(folder) for folder in sorted(Path(__file__).parent.iterdir()) if folder.is_dir() and folder.name[0] not in "_."]

from browser import close_chromium  # noqa: E402
from helpers import ARTIFACTS, EVERY_OPERATION, SHORT, Finished, run_loadtest, stop_warm_servers  # noqa: E402
from hypothesis import settings  # noqa: E402

from loadtest.account.azurite import EmbeddedAzurite  # noqa: E402
from loadtest.account.endpoint import Target, resolve_target  # noqa: E402
from loadtest.testbed.table import TestTable  # noqa: E402

pytest_plugins = ["machine_share"]

# Fuzzing in the suite: every failure prints the blob that reproduces it (``@reproduce_failure``) beside the seed
# Hypothesis prints, and no example database outlives a run (CI starts from a fresh clone; a local run must too).
settings.register_profile("suite", print_blob=True, database=None, deadline=None)
settings.load_profile("suite")


def pytest_sessionfinish(session: pytest.Session) -> None:
    close_chromium()
    stop_warm_servers()


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
    tests read (copy it before changing it), with Locust's own --csv and --json-file stats as ``locust*`` in it."""
    out = tmp_path_factory.mktemp("measured-run")
    stats = ("--csv", str(out / "locust"), "--json-file", str(out / "locust"))
    done = run_loadtest("run", *SHORT, *stats, "--out", str(out), "--connection-string", azurite.connection_string)
    assert done.code == 0, done.output
    return out


@pytest.fixture(scope="session")
def logged_azurite(tmp_path_factory):
    """An Azurite of its own that logs every request's headers (``log``), stopped by PID at the end."""
    log = tmp_path_factory.mktemp("azurite") / "azurite-debug.log"
    with EmbeddedAzurite(debug_log=log) as server:
        server.log = log
        yield server


@pytest.fixture(scope="session")
def every_operation_run(logged_azurite, tmp_path_factory) -> Callable[[str, str], tuple[Path, Finished]]:
    """``run(strategy, client)``: one short run of every built-in operation on the logged Azurite, made once per pair
    for the session (its folder and how it ended): ``test_mix_operations`` reads its books, ``test_serverlogs`` the
    request ids the same run sent."""
    runs: dict[tuple[str, str], tuple[Path, Finished]] = {}

    def run(strategy: str, client: str) -> tuple[Path, Finished]:
        if (strategy, client) not in runs:
            out = tmp_path_factory.mktemp("every-operation")
            args = ("--client", client, "--key-strategy", strategy, *EVERY_OPERATION, "--out", str(out))
            runs[strategy, client] = out, run_loadtest("run", *args, "--connection-string", logged_azurite.connection_string)
        return runs[strategy, client]

    return run
