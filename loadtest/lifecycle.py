"""The stress test's lifecycle on Locust's events: the docs' four steps around Locust's runner.

``init``: validate the settings, reach the target (starting Azurite when none is given), create and seed the test
table (once, never on a worker). ``test_stop``: results, verdict and report. ``quitting``: stop the test if it still
runs (Ctrl-C, SIGTERM), delete the table unless kept, stop Azurite, and set the exit code.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from itertools import count
from typing import Any

import gevent
from locust.env import Environment
from locust.runners import STATE_INIT, WorkerRunner
from locust.stats import CSV_STATS_INTERVAL_SEC

from . import wrapup
from .account.connection_string import CONNECTION_STRING_ENV, SECRET_ON_COMMAND_LINE
from .account.endpoint import TargetKind, resolve_target
from .ceiling.shape import CeilingShape
from .counting.request_evidence import RequestProfile
from .counting.request_listener import PartitionMetrics
from .exit_codes import EXIT_RUN_FAILED, ToolError, error_line
from .findings.assess import checks_for, exit_code
from .live import partitions_tab, start_form, telemetry
from .options.settings import Settings, namespace
from .outputs import check_out, new_run_id
from .redact import public_url, redact, redact_every_handler
from .report import junit
from .running.distributed import Cluster
from .running.prepare import SIGNALS, abandon, next_settings, prepare
from .running.run_results import results_of, upload_of
from .running.stress_run import StressRun, set_current_run
from .running.user_classes import settings_per_class
from .testbed.integrity import Ledger, verify
from .testbed.table import TestTable

__all__ = ["register"]

log = logging.getLogger("loadtest")
STOP_TIMEOUT_S = 10.0


def _fail(err: ToolError) -> None:
    """One line and the contract's exit code."""
    print(error_line(redact(str(err))), file=sys.stderr, flush=True)
    sys.exit(err.exit_code)


def register(environment: Environment) -> StressRun | None:
    """Prepare the test table and hook results, verdict and report onto the environment's events.

    Called from ``init``. The master (or the only process) creates and seeds the table once;
    a worker registers the listeners and joins the master's run when told at test start.
    """
    logging.getLogger("azure").setLevel(logging.WARNING)  # the SDK logs every request at INFO
    redact_every_handler()  # no key or SAS signature in any log line, at any level, in any view
    # in-flight operations finish when the test stops: a write killed mid-request may land unacknowledged
    environment.stop_timeout = environment.stop_timeout or STOP_TIMEOUT_S
    ledger = Ledger.register(environment)
    metrics = PartitionMetrics.register(environment)
    workload = RequestProfile.register(environment)  # its test_stop before the cluster's last drain
    cluster = Cluster.register(environment, metrics, ledger, workload, on_join=lambda data: _join_run(environment, cluster, data))
    if isinstance(environment.runner, WorkerRunner):
        gevent.signal_handler(signal.SIGINT, _interrupted)
        return None
    try:
        headless = getattr(environment.parsed_options, "headless", False)  # locust -f -u N: its users are known now
        users = (getattr(environment.parsed_options, "num_users", 0) or 0) if headless else 0
        settings = Settings.from_options(environment.parsed_options, users=users)
        settings_per_class(settings, environment.user_classes)  # every class attribute judged before anything is made
        if any(arg.split("=", 1)[0] == "--connection-string" for arg in sys.argv):  # locust -f … --connection-string
            log.warning(SECRET_ON_COMMAND_LINE)
        if settings.out:
            check_out(settings.out, overwrite=settings.overwrite)  # before anything is sent: the figures must land
        if isinstance(environment.shape_class, CeilingShape):  # its plan checked before anything is sent
            environment.shape_class.watch(metrics, environment.parsed_options)
        # seeded for every user class's key strategy; stopped or failed, it leaves nothing behind
        target, table = prepare(settings, environment.parsed_options, environment.user_classes)
    except ToolError as err:
        metrics.close()
        _fail(err)
    ledger.enabled = settings.verify
    cluster.watch(target.servers())  # their CPU read each second beside the generator's: causes measured
    run = StressRun(settings=settings, target=target, table=table, metrics=metrics, ledger=ledger, cluster=cluster)
    run.run_id = settings.run_id or run.run_id
    set_current_run(environment, run)
    for signum in SIGNALS:  # after set-up's own handlers are gone
        gevent.signal_handler(signum, _on_signal, run, environment, signum)
    # shown by Locust (its web UI, /swarm answers, HTML report) unredacted: never a query (a SAS) or user info
    environment.host = public_url(environment.host or target.endpoint)
    events = environment.events
    events.test_start.add_listener(lambda **_: _on_test_start(run, environment))
    events.test_start.add_listener(lambda **_: cluster.announce(_for_workers(run)))  # before the spawn messages
    events.test_stop.add_listener(lambda environment, **_: _on_test_stop(run, environment))
    events.quitting.add_listener(lambda environment, **_: _on_quitting(run, environment))
    events.quit.add_listener(lambda exit_code, **_: _on_quit(run))
    partitions_tab.register(environment, run)
    telemetry.register(environment, run)  # with --otel: the partitions' figures beside Locust's own metrics
    start_form.register(environment, lambda: run.settings)  # the start form: its fields, a bad start refused
    return run


def _for_workers(run: StressRun) -> dict[str, Any]:
    """What a worker needs to join: the table and settings, never a secret of the user's. Only the embedded
    Azurite's connection string travels (its key is public); workers of a real account take theirs from their own
    environment, or sign in to the master's --account-url (which holds no SAS: refused) with Azure AD of their own."""
    return {
        "run_id": run.run_id,  # the workers' client request ids carry it
        "table": run.table.name,
        "seeded": run.seeded,
        "rows": run.table.rows,  # a reused or shared table: the run's RowKey prefix
        "seeds": run.table.seeds,  # a shared table: the seeded rows' prefix
        "users": run.users,
        "options": {k: v for k, v in run.settings.public().items() if k not in ("connection_string", "upload")},  # the master's
        "embedded": run.target.connection_string if run.target.kind == TargetKind.AZURITE_EMBEDDED else "",
    }


def _join_run(environment: Environment, cluster: Cluster, data: dict[str, Any]) -> None:
    """On a worker: the master's table and settings, with this worker's own credentials."""
    own = getattr(environment.parsed_options, "connection_string", "") or os.environ.get(CONNECTION_STRING_ENV, "")
    options = namespace(**{**data["options"], "connection_string": own or data["embedded"]})
    try:  # in Locust's message loop: one line, not a traceback that ends the worker's loop
        settings = Settings.from_options(options)
        if not (settings.connection_string or settings.account_url):
            log.error(
                "this worker has no target: set %s or --connection-string (or --account-url on the master)",
                CONNECTION_STRING_ENV,
            )
            return
        target = resolve_target(
            connection_string=settings.connection_string, account_url=settings.account_url, timeout=settings.timeout
        )
    except ToolError as err:
        log.error("this worker cannot join the run: %s", redact(str(err)))
        return
    table = TestTable(
        target=target, name=data["table"], seeded=int(data["seeded"]), rows=data.get("rows", ""), seeds=data.get("seeds", "")
    )
    cluster.ledger.enabled = settings.verify
    cluster.in_flight.resize(settings.max_in_flight)
    set_current_run(
        environment,
        StressRun(
            settings=settings,
            target=target,
            table=table,
            metrics=cluster.metrics,
            ledger=cluster.ledger,
            cluster=cluster,
            run_id=data["run_id"],
            users=int(data.get("users", 0)),
        ),
    )
    log.info("Worker joined the run: table %s, PartitionKey %r", table.name, settings.partition_key)


class _Relayed(logging.Filter):
    """Ctrl-C reaches Locust's stop path as the SIGTERM it handles: Locust's log line names the signal received."""

    received = ""

    def filter(self, record: logging.LogRecord) -> bool:
        if self.received and record.getMessage() == "Got SIGTERM signal":
            record.msg, record.args = f"Got {self.received} signal", ()
            self.received = ""
        return True


_RELAYED = _Relayed()
logging.getLogger("locust.main").addFilter(_RELAYED)


def _interrupted() -> None:
    """Ctrl-C takes Locust's SIGTERM path (stop users, quitting, exit) instead of raising KeyboardInterrupt
    inside whichever user greenlet happens to run."""
    log.info("Interrupted: stopping the test, writing the report and cleaning up")
    _RELAYED.received = signal.SIGINT.name
    os.kill(os.getpid(), signal.SIGTERM)


def _on_signal(run: StressRun, environment: Environment, signum: int) -> None:
    """Ctrl-C or SIGTERM once set-up is done. A headless master may still wait for its workers, before Locust has
    a SIGTERM handler: the run is abandoned here (table dropped, Azurite stopped, exit 1). Later, Locust's path."""
    run.interrupted = run.interrupted or signal.Signals(signum).name  # the report says the run was cut short, and how
    runner = environment.runner
    if getattr(environment.parsed_options, "headless", False) and runner.state == STATE_INIT and not run.tests:
        gevent.spawn(_abandon_before_load, run, environment, signal.Signals(signum).name)
    elif signum == signal.SIGINT:
        _interrupted()


def _abandon_before_load(run: StressRun, environment: Environment, name: str) -> None:
    done = abandon(run.target, run.table, keep_table=run.settings.keep_table)
    environment.runner.quit()
    print(error_line(f"interrupted ({name}) before the load started: nothing was measured; {done}"), file=sys.stderr)
    raise SystemExit(EXIT_RUN_FAILED)  # a system error: gevent hands it to the main greenlet


def _on_test_start(run: StressRun, environment: Environment) -> None:
    run.tests += 1
    run.streams = count()
    run.users = getattr(environment.runner, "target_user_count", 0) or 0  # set before test_start fires
    if run.tests > 1:
        run.run_id = f"{run.settings.run_id}-{run.tests}" if run.settings.run_id else new_run_id()
    try:  # the web UI's start form may have changed settings
        # locust -f, the web UI: the users are known now
        run.settings = next_settings(
            run.settings, environment.parsed_options, run.table, environment.user_classes, users=run.users
        )
        run.check_output_dir()  # each test's --out by the first's rule, before it sends anything
    except ToolError as err:
        log.error("not started: %s", err)
        gevent.spawn(environment.runner.stop)
        return
    run.ledger.enabled = run.settings.verify
    run.in_flight.resize(run.settings.max_in_flight)
    run.started = time.time()


def _on_test_stop(run: StressRun, environment: Environment) -> None:
    if not run.started:
        return
    # until the outputs are written, this run has failed (a crash below must not exit 0)
    run.exit_code = environment.process_exit_code = EXIT_RUN_FAILED
    silent = run.cluster.collect(timeout=(environment.stop_timeout or 0) + 15)  # a master: every worker's last seconds
    if getattr(environment.parsed_options, "csv_prefix", None):  # Locust writes --csv once a second, not at its exit:
        gevent.sleep(CSV_STATS_INTERVAL_SEC * 1.1)  # once more now that every operation is in, so its counts are ours
    if silent:
        log.warning("no final report from workers %s: their last seconds are missing", ", ".join(silent))
    settings = run.settings
    results = results_of(run, environment)
    run.metrics.let_go_of_history()  # the results hold what the outputs need: the report draws without them beside it
    lost_workers = [lost["index"] for lost in results.workers.get("lost", []) if lost.get("index") is not None]
    read_back = (
        (lambda: verify(run.ledger, run.table.keys(), lost_workers=lost_workers, prefix=run.table.rows))
        if settings.verify
        else None
    )
    out = run.output_dir()
    report = not settings.no_report  # CI reads results.json and --junit
    upload = upload_of(run)
    if not wrapup.finish(results, out, target=run.target, started=run.started, read_back=read_back, upload=upload, report=report):
        return
    run.out, run.results = out, results
    log.info(wrapup.written_line(out, report))  # each test's, as it stops: a web UI runs several per process
    run.exit_code, run.messages = exit_code(results, checks_for(settings.fail_on))
    environment.process_exit_code = run.exit_code
    if settings.junit and junit.write(settings.junit, [junit.suite(results, settings.fail_on)]):
        log.info("JUnit: %s", settings.junit)
    run.started = 0.0


def _on_quitting(run: StressRun, environment: Environment) -> None:
    try:
        runner = environment.runner
        if runner is not None and runner.state in ("spawning", "running"):
            log.info("Stopping the test before quitting; the report covers what ran")
            runner.stop()
    finally:
        if not run.settings.keep_table:
            run.table.drop()
        elif run.table.created:
            log.info("Kept test table %s (--keep-table)", run.table.name)
        elif run.table.rows:
            log.info("Kept the rows under RowKey prefix %r in table %s (--keep-table)", run.table.rows, run.table.name)
        if run.table.seeds:
            log.info(
                "Left table %s to the run's other engines (rows seeded under %r): delete it once they are done",
                run.table.name,
                run.table.seeds,
            )
        run.target.close()
        environment.process_exit_code = run.exit_code


def _on_quit(run: StressRun) -> None:
    """The last lines a user sees: where the report is, the findings, the verdict."""
    if run.results is None or run.out is None:
        return
    lines = ["\n" + wrapup.written_line(run.out, not run.settings.no_report)]
    lines += wrapup.console_lines(run.results)
    lines.extend(f"  FAILED {m}" for m in run.messages)
    print("\n".join(lines), flush=True)
