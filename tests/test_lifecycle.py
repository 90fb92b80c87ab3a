"""The docs' four steps on Locust's events, in this process: ``register`` on an ``Environment`` with Locust's own
``LocalRunner`` against the session's Azurite, through test start, test stop (results, verdict, report) and
quitting (the table dropped, the exit code set)."""

from __future__ import annotations

import argparse

import gevent
import pytest
from helpers import results_of, tables
from locust.env import Environment
from locust.event import Events

from loadtest import lifecycle
from loadtest.config import namespace
from loadtest.lifecycle import current_run, register
from loadtest.users import HotPartitionUser


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
    assert lifecycle.new_run_id() != lifecycle.new_run_id()
