"""Two test processes on one machine (pytest-xdist's ``-n 2``), and the tests whose figures the other's work would move
run with nothing beside them.

A test marked ``alone`` (its load's pace, a throttling budget, a time bound tight to the machine) holds the machine
alone, its fixtures' setup and teardown included; every other test shares it with the other process's test. It is a
readers-writer lock over two files that every worker of a run opens: a test that would be alone takes the turnstile,
so the tests after it wait there while the one beside it ends, then the machine; a shared test passes the turnstile and
holds the machine shared. Without xdist (one process) nothing is locked.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

MARK = "alone"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARK}: runs with no other test beside it (its figures are the machine's pace)")
    if hasattr(config, "workerinput"):  # an xdist worker
        _keep_the_hub_waiting()


def _keep_the_hub_waiting() -> None:
    """The worker waits for its next tests on an event that execnet's reader thread sets. The tests patched threading
    with gevent's (as Locust does), so the wait is the hub's, and a hub with nothing of its own to wait on ends the wait
    at once (``LoopExit``). A timer of an hour keeps it waiting; the set from the other thread then wakes it."""
    import gevent

    timer = gevent.get_hub().loop.timer(3600.0, 3600.0)
    timer.start(lambda: None)
    _KEPT.append(timer)


_KEPT: list[object] = []


@contextmanager
def _held(path: Path, mode: int) -> Iterator[None]:
    with path.open("a") as file:
        fcntl.flock(file, mode)
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def _locks() -> tuple[Path, Path] | None:
    """The run's turnstile and machine lock files (None outside xdist)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return None
    base = Path(tempfile.gettempdir()) / f"partition-stress-tests-{run}"
    return base.with_suffix(".turnstile"), base.with_suffix(".machine")


def pytest_unconfigure(config: pytest.Config) -> None:
    """The lock files go with the last tests (a worker that ends leaves the other alone, so no lock is needed)."""
    for path in _locks() or ():
        path.unlink(missing_ok=True)


@contextmanager
def _share(alone: bool) -> Iterator[None]:
    locks = _locks()
    if locks is None:
        yield
        return
    turnstile, machine = locks
    if alone:
        with _held(turnstile, fcntl.LOCK_EX), _held(machine, fcntl.LOCK_EX):
            yield
        return
    with _held(turnstile, fcntl.LOCK_EX):
        pass  # behind a test waiting to be alone
    with _held(machine, fcntl.LOCK_SH):
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with _share(item.get_closest_marker(MARK) is not None):
        return (yield)
