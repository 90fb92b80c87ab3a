"""The docs' four steps on Locust's events, in this process: ``register`` on an ``Environment`` with Locust's own
``LocalRunner`` against the session's Azurite, through test start, test stop (results, verdict, report) and
quitting (the table dropped, the exit code set)."""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request

import gevent
import pytest
from helpers import results_of, series_of, tables
from locust.argument_parser import parse_options
from locust.env import Environment
from locust.event import Events
from locust.runners import STATE_RUNNING

import loadtest.plugin  # noqa: F401  (the tool's options on Locust's parser)
from loadtest.child_process import free_port
from loadtest.command_line.dispatch import LOCUSTFILE
from loadtest.lifecycle import register
from loadtest.options.settings import namespace
from loadtest.outputs import new_run_id
from loadtest.running.stress_run import current_run
from loadtest.running.users import HotPartitionUser


class _Watcher:
    def cancel(self) -> None:
        pass


@pytest.fixture
def environment(monkeypatch, azurite):
    """An environment as Locust's ``main`` makes it, without this process's signal handlers being taken over."""
    monkeypatch.setattr(gevent, "signal_handler", lambda *args, **kwargs: _Watcher())

    def make(**options) -> Environment:
        parsed = namespace(connection_string=azurite.connection_string, seed_entities=40, **options)
        env = Environment(user_classes=[HotPartitionUser], events=Events(), parsed_options=argparse.Namespace(**vars(parsed)))
        env.create_local_runner()
        return env

    return make


def test_a_run_in_process_writes_its_results_then_quitting_drops_the_table(environment, target, tmp_path):
    env = environment(out=str(tmp_path / "out"), mix="read=70,upsert=30", partition_target=1, fail_on="hot")
    run = register(env)
    assert current_run(env) is run and run.table.name in tables(target) and run.table.count("hot") == 40
    env.runner.start(3, spawn_rate=10)
    gevent.sleep(2.5)
    env.runner.stop()  # Locust's test_stop: results, verdict, report
    data = results_of(tmp_path / "out")
    assert {r["op_class"] for r in data["partitions"] if r["partition"] == "hot"} >= {"GET", "PUT"}
    assert data["run"]["table"] == run.table.name and data["run"]["target_kind"] == "connection-string"
    assert (tmp_path / "out" / "report.html").is_file() and "HOT" in {f["kind"] for f in data["findings"]}
    assert env.process_exit_code == 3 and run.messages  # --fail-on hot
    env.events.quitting.fire(environment=env, reverse=True)
    assert run.table.name not in tables(target)
    assert env.process_exit_code == 3


def test_bad_settings_end_register_in_one_line_before_anything_is_created(environment, target, capsys):
    before = tables(target)
    env = environment(partition_key="a/b")
    with pytest.raises(SystemExit) as stopped:
        register(env)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().startswith("loadtest: error: --partition-key")
    assert tables(target) == before


def test_users_outside_a_registered_environment_say_what_to_do():
    with pytest.raises(RuntimeError, match="import from loadtest in the locustfile"):
        current_run(Environment(events=Events()))
    assert new_run_id() != new_run_id()


def test_no_secret_in_locusts_host_its_page_or_its_swarm_answer(azurite, target, tmp_path, monkeypatch):
    """Locust shows its host unredacted (the web UI's page, ``/swarm``'s answer, its HTML report): an endpoint with a
    SAS in its query (``--account-url``'s, or ``--host``'s) reaches it without the query."""
    monkeypatch.setattr(gevent, "signal_handler", lambda *args, **kwargs: _Watcher())
    monkeypatch.setattr(sys, "argv", ["locust"])  # the web UI's page parses the command line
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite.connection_string)
    sas = "http://127.0.0.1:10002/devstoreaccount1?sv=2022-11-02&sig=pl4nt3dS1g"
    options = parse_options(["-f", str(LOCUSTFILE), "--host", sas, "--seed-entities", "40", "--out", str(tmp_path / "out")])
    env = Environment(user_classes=[HotPartitionUser], events=Events(), host=options.host, parsed_options=options)
    env.create_local_runner()
    run = register(env)
    port = free_port()
    web = env.create_web_ui("127.0.0.1", port)
    try:
        gevent.sleep(0.2)
        url = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(url + "/", timeout=10) as response:
            page = response.read().decode()
        swarm = urllib.request.Request(url + "/swarm", data=b"user_count=1&spawn_rate=1", method="POST")
        with urllib.request.urlopen(swarm, timeout=10) as response:
            answer = json.loads(response.read())
        gevent.sleep(1)
        env.runner.stop()
    finally:
        web.stop()
        env.events.quitting.fire(environment=env, reverse=True)
    assert env.host == "http://127.0.0.1:10002/devstoreaccount1" and answer["host"] == env.host, answer
    assert "pl4nt3dS1g" not in page and "pl4nt3dS1g" not in json.dumps(answer)
    assert run.table.name not in tables(target)


def test_each_test_logs_its_report_as_it_stops_and_a_new_key_is_named_as_it_is_seeded(environment, tmp_path, caplog):
    """As the web UI runs them: several tests in one process, the start form changing the PartitionKey between."""
    caplog.set_level("INFO", logger="loadtest")
    env = environment(out=str(tmp_path / "out"))
    run = register(env)
    reports = []
    for key in ("hot", "orders"):
        env.parsed_options.partition_key = key
        env.runner.start(2, spawn_rate=10)  # in a greenlet: clears Locust's stats, seeds (test_start), spawns
        deadline = time.monotonic() + 30
        while env.runner.state != STATE_RUNNING or env.runner.stats.total.num_requests < 20:  # however fast the machine
            assert time.monotonic() < deadline, (env.runner.state, env.runner.stats.total.num_requests)
            gevent.sleep(0.05)
        env.runner.stop()
        reports.append(str(run.out / "report.html"))
        assert f"Report: {reports[-1]}" in caplog.text  # logged when the test stops, not when the process quits
    assert reports[0] != reports[1]
    assert "Seeding 40 entities under PartitionKey 'orders'" in caplog.text
    env.events.quitting.fire(environment=env, reverse=True)


def test_an_open_loops_users_reached_late_at_the_stop_neither_send_nor_owe_what_falls_due_after_it(environment, tmp_path):
    """A process busy when the run stops reaches its users late (30-140 ms after the stop, measured on this machine,
    and what fell due meanwhile was counted unsent or sent): the schedule ends when the users are asked to stop."""
    env = environment(out=str(tmp_path / "out"), no_report=True, arrival_rate=40, mix="read=100")
    run = register(env)
    # after the metrics noted the stop, the users are reached 1.5 s late (their greenlets go on meanwhile: patched sleep)
    env.events.test_stopping.add_listener(lambda **_: time.sleep(1.5))
    env.runner.start(2, spawn_rate=10)
    gevent.sleep(2.5)
    env.runner.stop()
    rows = series_of(tmp_path / "out")
    after = [r for r in rows if r["second"] > run.metrics.stopped and (r["offered"] or r["unsent"])]
    unsent, offered = sum(r["unsent"] for r in rows), sum(r["offered"] for r in rows)
    assert not after and offered >= 60 and unsent <= 0.25 * (offered + unsent), (after, offered, unsent)
    env.events.quitting.fire(environment=env, reverse=True)
    assert run.table.name not in tables(run.target)
