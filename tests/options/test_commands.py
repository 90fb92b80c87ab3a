"""Which command takes which option: declared once on each option (``Option.commands``), and every command's parser,
refusals and shared options derived from it."""

from __future__ import annotations

import pytest
from helpers import in_process

from loadtest.command_line.dispatch import _parser
from loadtest.options.commands import (
    CLEANUP_OPTIONS,
    COMMANDS,
    MERGE_OPTIONS,
    REAL_RUN_ONLY,
    RUN_OPTIONS,
    RUNNER_OPTIONS,
    SEARCH_SETS,
    SIMULATION_REFUSES,
)


def _flags(command: str) -> set[str]:
    sub = _parser()._subparsers._group_actions[0].choices[command]  # noqa: SLF001
    return {flag for action in sub._actions for flag in action.option_strings if flag not in ("-h", "--help")}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_registers_exactly_the_options_that_name_it(command):
    declared = {flag for _, options in COMMANDS[command] for opt in options for flag in opt.flags if opt.flags[0][0] == "-"}
    assert _flags(command) == declared
    for _, options in COMMANDS[command]:
        for opt in options:
            assert command in opt.commands, (command, opt.flag)


def test_what_a_simulation_refuses_is_every_real_run_option_and_nothing_it_takes(monkeypatch):
    assert set(REAL_RUN_ONLY) == {"connection_string", "account_url", "client", "table", "reuse_table", "keep_table"} | {
        "timeout", "rate", "skip_verify", "emulate_throttling", "request_log", "run_id", "engine", "upload", "max_in_flight"
    }  # fmt: skip
    assert not set(SIMULATION_REFUSES) & _flags("simulate")
    assert {"-u", "--workers", "--web", "--processes", "--table", "--max-in-flight"} <= set(SIMULATION_REFUSES)
    for flag in ("--table", "--workers", "-u"):  # a real run's option, given to a simulation: its own line, exit 2
        code, _, err = in_process(monkeypatch, "simulate", "--arrival-rate", "100", flag, "5")
        assert code == 2 and f"loadtest: error: {flag}: only a real run has it" in err, err


def test_merge_and_cleanup_share_the_stress_tests_options_they_are_marked_for():
    assert {opt.dest for opt in MERGE_OPTIONS} == {"sources", "from_container"} | {
        "run_id", "connection_string", "account_url", "timeout", "fail_on", "out", "overwrite", "no_report", "junit"
    }  # fmt: skip
    assert {opt.dest for opt in CLEANUP_OPTIONS} == {"run_id", "table", "connection_string", "account_url", "timeout"}
    assert [opt.dest for opt in CLEANUP_OPTIONS if opt.required] == ["run_id"]


def test_a_ceiling_search_refuses_the_users_and_time_it_sets_itself(monkeypatch):
    assert {flag for opt in RUN_OPTIONS for flag in opt.flags} <= set(SEARCH_SETS)
    assert not {flag for opt in RUNNER_OPTIONS for flag in opt.flags} & set(SEARCH_SETS)  # it runs Locust as a run does
    for flag in ("-u", "--run-time"):
        code, _, err = in_process(monkeypatch, "ceiling", flag, "5")
        assert code == 2 and f"loadtest: error: {flag}: the ceiling search sets the users itself" in err, err
