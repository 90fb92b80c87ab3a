"""Locust's configuration conventions for every option of the tool: the command line, ``LOCUST_<OPTION>``
variables and ``locust.conf`` / ``--config``, with Locust's precedence (command line > environment > file)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT
from test_cli import SHORT, results_of

from loadtest.options import OPTIONS

QUICK = ("-t", "2s", "-u", "1", "--seed-entities", "10")


def run(tool: str, *args: str, env: dict[str, str], cwd=ROOT) -> subprocess.CompletedProcess:
    """``loadtest run ARGS`` or ``locust -f loadtest/locustfile.py --headless ARGS`` in a child process."""
    command = ["loadtest", "run"] if tool == "loadtest" else ["locust", "-f", str(ROOT / "loadtest/locustfile.py"), "--headless"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LOCUST_") and k != "AZURE_STORAGE_CONNECTION_STRING"}
    return subprocess.run(
        [sys.executable, "-m", *command, *args],
        cwd=cwd,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_every_option_has_its_locust_variable():
    names = {opt.locust_env for opt in OPTIONS}
    assert len(names) == len(OPTIONS) and "LOCUST_PARTITION_TARGET" in names and "LOCUST_EMULATOR_PARTITION_RATE" in names


@pytest.mark.parametrize("tool", ["loadtest", "locust"])
def test_an_option_set_through_its_locust_variable_is_honoured_and_the_command_line_wins(azurite, tmp_path, tool):
    env = {"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string, "LOCUST_PARTITION_TARGET": "7"}
    env["LOCUST_SKIP_VERIFY"] = "true"  # a switch too
    done = run(tool, *QUICK, "--out", str(tmp_path / "env"), env=env)
    assert done.returncode == 0, done.stderr
    data = results_of(tmp_path / "env")
    assert data["run"]["partition_target"] == 7 and data["integrity"] == {}
    done = run(tool, *QUICK, "--partition-target", "9", "--out", str(tmp_path / "cli"), env=env)
    assert done.returncode == 0, done.stderr
    assert results_of(tmp_path / "cli")["run"]["partition_target"] == 9


@pytest.mark.parametrize("tool", ["loadtest", "locust"])
def test_options_in_locust_conf_are_honoured_below_the_environment(azurite, tmp_path, tool):
    (tmp_path / "locust.conf").write_text("partition-target = 7\nkey-strategy = hash-prefix:4\nskip-verify = true\n")
    env = {"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    done = run(tool, *QUICK, "--out", str(tmp_path / "conf"), env=env, cwd=tmp_path)  # ./locust.conf, as Locust reads it
    assert done.returncode == 0, done.stderr
    data = results_of(tmp_path / "conf")
    assert data["run"]["partition_target"] == 7 and data["run"]["settings"]["key_strategy"] == "hash-prefix:4"
    assert data["integrity"] == {}
    done = run(tool, *QUICK, "--config", str(tmp_path / "locust.conf"), "--out", str(tmp_path / "env"),
               env={**env, "LOCUST_PARTITION_TARGET": "8"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert results_of(tmp_path / "env")["run"]["partition_target"] == 8


def test_a_bad_value_from_a_locust_variable_names_the_variable(loadtest, azurite):
    env = {"LOCUST_PARTITION_TARGET": "lots", "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    done = loadtest("run", *SHORT, env=env)
    assert done.code == 2 and "Traceback" not in done.output
    assert "loadtest: error: $LOCUST_PARTITION_TARGET 'lots': must be a whole number" in done.stderr
