"""A process's stress test across the web UI's tests: where each one writes, and the rule that folder follows."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import gevent
import pytest
from locust.env import Environment
from locust.event import Events

from loadtest.lifecycle import _on_test_start
from loadtest.options.settings import Settings, namespace
from loadtest.outputs import RESULTS_FILE
from loadtest.running.stress_run import StressRun


class _Runner:
    target_user_count = 2
    stopped = False

    def stop(self) -> None:
        self.stopped = True


def web_session(options) -> tuple[StressRun, Environment]:
    """A process past its first test, as the web UI leaves it (no table, no load: the start is the question)."""
    environment = Environment(events=Events(), parsed_options=options)
    environment.runner = _Runner()
    run = StressRun(
        settings=Settings.from_options(options),
        target=None,
        table=None,
        metrics=None,
        ledger=SimpleNamespace(enabled=False),
        cluster=SimpleNamespace(in_flight=SimpleNamespace(resize=lambda size: None)),
        tests=1,
    )
    return run, environment


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_web_sessions_second_test_follows_outs_rule_before_it_starts(tmp_path, caplog, overwrite):
    """``--out X``: the second test writes to X-2, and X-2 holding an earlier run is refused before the test sends
    anything, as X itself is (``outputs.check_out``), unless ``--overwrite``."""
    caplog.set_level(logging.ERROR, logger="loadtest")
    earlier = tmp_path / "X-2" / RESULTS_FILE
    earlier.parent.mkdir()
    earlier.write_text("{}")
    run, environment = web_session(namespace(out=str(tmp_path / "X"), overwrite=overwrite))
    _on_test_start(run, environment)
    gevent.sleep(0)  # the refused test's stop, spawned
    assert run.output_dir() == tmp_path / "X-2"
    if overwrite:
        assert run.started and not environment.runner.stopped
    else:
        assert not run.started and environment.runner.stopped
        assert f"not started: --out {str(tmp_path / 'X-2')!r}: holds an earlier run" in caplog.text


def test_a_second_tests_folder_that_cannot_be_made_is_refused_before_it_starts(tmp_path, caplog):
    caplog.set_level(logging.ERROR, logger="loadtest")
    (tmp_path / "X-2").write_text("a file where the folder goes")
    run, environment = web_session(namespace(out=str(tmp_path / "X")))
    _on_test_start(run, environment)
    assert not run.started and "must be a folder, and it is a file" in caplog.text
