"""Locust's configuration conventions for every option of the tool: the command line, ``LOCUST_<OPTION>``
variables and ``locust.conf`` / ``--config``, with Locust's precedence (command line > environment > file)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from helpers import ROOT, SHORT, Finished, in_process, results_of, warm_start
from locust.argument_parser import parse_options

import loadtest.plugin  # noqa: F401  (the tool's options on Locust's parser)
from loadtest.options.option import SWITCH_WORDS
from loadtest.options.settings import Settings
from loadtest.options.stress import OPTIONS

QUICK = ("-t", "2s", "-u", "1", "--seed-entities", "10")


def run(tool: str, *args: str, env: dict[str, str]) -> Finished:
    """``loadtest run ARGS`` or ``locust -f loadtest/locustfile.py --headless ARGS`` in a child process (started warm:
    its environment is its own, read as the command runs) without the variables of this one."""
    module, command = (
        ("loadtest", ["run"]) if tool == "loadtest" else ("locust", ["-f", str(ROOT / "loadtest/locustfile.py"), "--headless"])
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LOCUST_") and k != "AZURE_STORAGE_CONNECTION_STRING"}
    return warm_start(module, [*command, *args], env={**clean, **env}, timeout=120)


def test_every_option_has_its_locust_variable():
    names = {opt.locust_env for opt in OPTIONS}
    assert len(names) == len(OPTIONS) and "LOCUST_PARTITION_TARGET" in names and "LOCUST_EMULATOR_PARTITION_RATE" in names


def settings_of(monkeypatch, tool: str, *args: str, env: dict[str, str], cwd: Path) -> Settings:
    """The settings Locust's own parser gives the tool's user, in this process: from ``locust -f ARGS``, or from
    the command line ``loadtest run ARGS`` hands Locust (with Locust's start replaced). Environment and config
    files are read as the child process would read them."""
    monkeypatch.chdir(cwd)
    for name in [k for k in os.environ if k.startswith("LOCUST_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if tool == "loadtest":
        code, _, stderr = in_process(monkeypatch, "run", *args)  # the environment set above
        assert code == "launched", stderr
        argv = sys.argv[1:]  # what loadtest run handed Locust
    else:
        argv = ["-f", str(ROOT / "loadtest/locustfile.py"), "--headless", *args]
    return Settings.from_options(parse_options(argv))


@pytest.mark.parametrize("tool", ["loadtest", "locust"])
def test_an_option_set_through_its_locust_variable_is_honoured_and_the_command_line_wins(monkeypatch, tmp_path, tool):
    env = {"LOCUST_PARTITION_TARGET": "7", "LOCUST_SKIP_VERIFY": "true"}  # a switch too
    settings = settings_of(monkeypatch, tool, *QUICK, env=env, cwd=tmp_path)
    assert settings.partition_target == 7 and settings.skip_verify
    assert settings_of(monkeypatch, tool, *QUICK, "--partition-target", "9", env=env, cwd=tmp_path).partition_target == 9


@pytest.mark.parametrize("tool", ["loadtest", "locust"])
def test_options_in_locust_conf_are_honoured_below_the_environment(monkeypatch, tmp_path, tool):
    (tmp_path / "locust.conf").write_text("partition-target = 7\nkey-strategy = hash-prefix:4\nskip-verify = true\n")
    settings = settings_of(monkeypatch, tool, *QUICK, env={}, cwd=tmp_path)  # ./locust.conf, as Locust reads it
    assert settings.partition_target == 7 and settings.key_strategy == "hash-prefix:4" and settings.skip_verify
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    given = settings_of(
        monkeypatch, tool, *QUICK, "--config", str(tmp_path / "locust.conf"), env={"LOCUST_PARTITION_TARGET": "8"}, cwd=elsewhere
    )
    assert given.partition_target == 8 and given.key_strategy == "hash-prefix:4"


@pytest.mark.parametrize("tool", ["loadtest", "locust"])
def test_settings_from_the_environment_reach_the_run_as_a_user_runs_it(azurite, tmp_path, tool):
    """The whole way, in a child process: a variable and a switch from the environment in results.json."""
    env = {"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string, "LOCUST_PARTITION_TARGET": "7"}
    env["LOCUST_SKIP_VERIFY"] = env["LOCUST_NO_REPORT"] = "true"
    done = run(tool, *QUICK, "--out", str(tmp_path / "env"), env=env)
    assert done.code == 0, done.output
    data = results_of(tmp_path / "env")
    assert data["run"]["partition_target"] == 7 and data["integrity"] == {}
    assert not (tmp_path / "env" / "report.html").exists() and f"Results: {tmp_path / 'env' / 'results.json'}" in done.output


def test_a_bad_value_from_a_locust_variable_names_the_variable(loadtest, azurite):
    env = {"LOCUST_PARTITION_TARGET": "lots", "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    done = loadtest("run", *SHORT, env=env)
    assert done.code == 2 and "Traceback" not in done.output
    assert "loadtest: error: $LOCUST_PARTITION_TARGET 'lots': must be a whole number" in done.stderr


@pytest.mark.parametrize("value", ["ture", "", " true", "enabled"])
def test_a_switch_from_a_locust_variable_is_judged_by_the_tool_in_one_line(monkeypatch, value):
    """Not handed over to Locust's parser, whose refusal reads ``locust: error:`` after the tool has said nothing."""
    code, stdout, stderr = in_process(monkeypatch, "run", env={"LOCUST_KEEP_TABLE": value})
    assert code == 2 and stdout == "" and stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"loadtest: error: $LOCUST_KEEP_TABLE {value!r}: --keep-table is a switch; valid values: true,")


@pytest.mark.parametrize("word", SWITCH_WORDS + ("TRUE", "Off"))
def test_the_switch_words_the_tool_takes_are_the_ones_locusts_parser_takes(monkeypatch, word):
    code, _, stderr = in_process(monkeypatch, "run", env={"LOCUST_KEEP_TABLE": word})
    assert code == "launched", stderr
    kept = parse_options(["-f", str(ROOT / "loadtest/locustfile.py"), "--headless"]).keep_table
    assert kept == (word.lower() in ("true", "yes", "on", "1"))


def test_skews_help_writes_a_hotspot_as_the_readme_and_the_parser_take_it():
    from loadtest.options.stress import OPTIONS

    (skew,) = [opt for opt in OPTIONS if opt.dest == "skew"]
    assert "hotspot:80,20" in skew.help and "%," not in skew.help
    assert skew.parse("--skew", "hotspot:80,20")  # the form the help shows is one the parser takes
