"""Before the load (the docs' steps 1 and 2): reach the target, create the test table, seed it.

Ctrl-C or SIGTERM at any point of it stops cleanly, although Locust's own handler does not exist
yet: what this run started is stopped (an embedded Azurite, the throttling emulator), the table
it created is dropped (unless ``--keep-table``), and the run ends with one line and exit 1. A
failure does the same, with the failure's own line and exit code.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import gevent

from ..account.connection_string import CONNECTION_STRING_ENV, FROM_FLAG_ENV
from ..account.endpoint import Target, resolve_target
from ..exit_codes import RunError, ToolError
from ..options.settings import Settings
from ..redact import public_url
from ..testbed.seeding_claim import seed_once
from ..testbed.table import TestTable, run_table_name
from .user_classes import settings_per_class

__all__ = ["Interrupted", "SIGNALS", "abandon", "next_settings", "prepare", "seed"]

log = logging.getLogger("loadtest")
SIGNALS = (signal.SIGINT, signal.SIGTERM)
ABANDON_TIMEOUT_S = 5.0  # a stopped run waits this long, not --timeout, for the table's deletion


class Interrupted(SystemExit):
    """A stop signal during set-up. A SystemExit, so gevent hands it to the main greenlet wherever it lands (a
    seeding greenlet, the hub), without printing it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signal = signal.Signals(signum).name


class _Signals:
    """Ctrl-C and SIGTERM raise ``Interrupted`` until ``stopping``; then (while undoing) they are ignored.

    gevent's signal watchers, not ``signal.signal``: a Python handler would wait for the next Python
    bytecode, and a hub idling on a silent socket runs none.
    """

    stopping = False

    def handle(self, signum: int) -> None:
        if not self.stopping:
            self.stopping = True
            raise Interrupted(signum)  # from a watcher's greenlet: gevent throws it into the main greenlet


@contextmanager
def _interruptible() -> Iterator[_Signals]:
    signals = _Signals()
    watchers = [gevent.signal_handler(signum, signals.handle, signum) for signum in SIGNALS]
    try:
        yield signals
    finally:
        for watcher in watchers:
            watcher.cancel()


class _Preparation:
    """What set-up has made so far, to be undone if it is stopped."""

    def __init__(self, settings: Settings, user_classes: Sequence[type]) -> None:
        self.settings, self.user_classes = settings, user_classes
        self.phase = "starting"
        self.target: Target | None = None
        self.table: TestTable | None = None

    def run(self) -> tuple[Target, TestTable]:
        settings = self.settings
        self.phase = "reaching the target" if settings.connection_string or settings.account_url else "starting Azurite"
        self.target = resolve_target(
            connection_string=settings.connection_string, account_url=settings.account_url, timeout=settings.timeout
        )
        if settings.emulator:
            self.phase = "starting the throttling emulator"
            self.target = self.target.behind_emulator(settings.emulator, settings.request_log)
            log.info("Throttling emulator on %s (pid %s)", self.target.endpoint, self.target.emulator.pid)
        self.phase = "creating the test table"
        if settings.run_id:  # engines of one run: one table, whoever is first
            self.table = TestTable.named(self.target, settings.table or run_table_name(settings.run_id))
            self.table.share(settings.run_id, settings.engine)
        else:
            self.table = TestTable.named(self.target, settings.table)
            self.table.create(reuse=settings.reuse_table)
        log.info("Test table %s on %s (%s)", self.table.name, self.target.endpoint, self.target.kind)
        self.phase = "seeding"
        seed(self.table, _per_class(settings, self.user_classes))
        return self.target, self.table


def prepare(settings: Settings, options: argparse.Namespace, user_classes: Sequence[type] = ()) -> tuple[Target, TestTable]:
    """The target and the table, seeded for every user class (each with its own key strategy and entities);
    raises a ``ToolError`` once whatever was made is undone."""
    log.info("Target: %s", _target_source(options, settings))
    preparation = _Preparation(settings, user_classes)
    with _interruptible() as signals:
        try:
            return preparation.run()
        except Interrupted as stop:
            done = abandon(preparation.target, preparation.table, keep_table=settings.keep_table)
            if preparation.phase == "starting Azurite":
                done = "Azurite stopped"  # by its own start, which never returned it
            raise RunError(f"interrupted ({stop.signal}) while {preparation.phase}: nothing was measured; {done}") from None
        except ToolError:
            signals.stopping = True
            abandon(preparation.target, preparation.table, keep_table=settings.keep_table)
            raise


def _target_source(options: argparse.Namespace, settings: Settings) -> str:
    """Which target the settings name, and where that came from (never the secret itself)."""
    if settings.connection_string:
        given = getattr(options, "connection_string", "") or os.environ.get(FROM_FLAG_ENV)
        return "the connection string " + ("given with --connection-string" if given else f"from ${CONNECTION_STRING_ENV}")
    if settings.account_url:
        return f"{public_url(settings.account_url)} with Azure AD (DefaultAzureCredential)"
    return "an embedded Azurite (no --connection-string, --account-url or $" + CONNECTION_STRING_ENV + ")"


def abandon(target: Target | None, table: TestTable | None, *, keep_table: bool) -> str:
    """Undo set-up: drop the table this run created (unless kept), stop what it started. Says what was done."""
    done = []
    if table is not None and table.created:
        if keep_table:
            done.append(f"test table {table.name} kept (--keep-table)")
        else:
            table.drop(timeout=ABANDON_TIMEOUT_S)
            done.append(f"test table {table.name} " + ("NOT dropped (delete it by hand)" if table.created else "dropped"))
    elif table is not None and table.rows and not keep_table:
        prefix = table.rows
        table.drop(timeout=ABANDON_TIMEOUT_S)  # a reused table: the rows this run wrote
        done.append(f"rows under {prefix!r} " + ("NOT removed from" if table.rows else "removed from") + f" {table.name}")
    if target is not None:
        if target.emulator:
            done.append("throttling emulator stopped")
        if target.azurite:
            done.append("Azurite stopped")
        target.close()
    return ", ".join(done) or "nothing was left behind"


def seed(table: TestTable, settings: Sequence[Settings]) -> None:
    """Seed the rows each of ``settings`` addresses, once per distinct seeding (the union of the user classes'); in a
    table engines share, once for all of them."""
    for one in {s.seeding: s for s in settings}.values():
        keys = one.keys(rows=table.seeded_prefix)
        if table.seeds:
            seed_once(table, keys, one.seed_entities, one.shape, seeding=repr(one.seeding), engine=one.engine)
        else:
            table.seed(keys, one.seed_entities, one.shape)


def next_settings(
    current: Settings, options: argparse.Namespace, table: TestTable, user_classes: Sequence[type] = (), *, users: int = 0
) -> Settings:
    """The settings of the next test of ``users`` (the web UI's start form may change them); a new PartitionKey or
    size is seeded first, for every user class. The target and the table stay those the process started with.
    Raises ``UsageError``."""
    new = replace(
        Settings.from_options(options, users=users),
        connection_string=current.connection_string,
        account_url=current.account_url,
        table=current.table,
        reuse_table=current.reuse_table,
        run_id=current.run_id,
        engine=current.engine,
    )
    seeding = lambda s: [one.seeding for one in _per_class(s, user_classes)]  # noqa: E731
    if new != current and seeding(new) != seeding(current):
        seed(table, _per_class(new, user_classes))
    return new


def _per_class(settings: Settings, user_classes: Sequence[type]) -> list[Settings]:
    """Each user class's settings (the run's, with its class attributes over them, judged); the run's if no class."""
    return settings_per_class(settings, user_classes)
