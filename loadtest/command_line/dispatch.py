"""The ``loadtest`` command's parser and each command's start: ``run`` and ``ceiling`` over Locust's own runner,
``report`` and ``emulator`` here; ``simulate``, ``advise``, ``traffic``, ``merge``, ``compare`` and ``cleanup`` handed to
the modules that run them.

``run`` validates every option at the edge (one line and exit 2 on bad input, before
anything starts), then hands the same options to Locust's ``main`` with this package's
locustfile: headless by default, Locust's web UI with ``--web``.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from ..account.connection_string import CONNECTION_STRING_ENV, FROM_FLAG_ENV, SECRET_ON_COMMAND_LINE
from ..exit_codes import EXIT_OK, EXIT_USAGE, ToolError, UsageError, error_line
from ..limits import MAX_USERS
from ..options.command_help import COMMAND_HELP
from ..options.commands import COMMANDS, COMPARE_OPTIONS, REPORT_OPTIONS, RUN_OPTIONS, RUNNER_OPTIONS, SEARCH_SETS, SERVE_OPTIONS
from ..options.emulator import EMULATOR_OPTIONS, REQUEST_LOG
from ..options.option import add_options, of
from ..options.settings import Settings
from ..options.stress import CEILING_OPTIONS, OPTIONS
from ..outputs import RESULTS_FILE, check_out, new_run_id
from .locust_args import locust_flags, own_master

__all__ = ["main"]

#: Every flag of the tool's options, whichever command has it.
TOOL_FLAGS = {flag for groups in COMMANDS.values() for _, options in groups for opt in options for flag in opt.flags}
LOCUSTFILE = Path(__file__).resolve().parent.parent / "locustfile.py"
CEILING_LOCUSTFILE = LOCUSTFILE.with_name("ceiling_locustfile.py")  # the same user under the ceiling search's shape


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit 2) instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        print(error_line(f"{message} (see {self.prog} --help)"), file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="loadtest", description="Stress-test Azure Table Storage partitions with Locust.")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    for command, (help_, description) in COMMAND_HELP.items():
        commands.add_parser(command, help=help_, description=description or None)
    for command, groups in COMMANDS.items():
        for title, options in groups:
            add_options(commands.choices[command], options, title)
    return parser


def _locust_argv(ns: argparse.Namespace, extra: list[str]) -> list[str]:
    """Locust's command line for this run (``ns`` validated). The connection string travels in the environment.
    A ceiling search runs the locustfile with its shape, which sets the users; the steps bound its time."""
    searching = ns.command == "ceiling"
    argv = ["locust", "-f", str(CEILING_LOCUSTFILE if searching else LOCUSTFILE)]
    if not searching:
        argv += ["-u", str(ns.users), "-r", str(ns.spawn_rate)]
    if ns.workers:
        argv += ["--processes", str(ns.workers), *own_master(extra)]
    if ns.web:
        argv += ["--web-host", ns.web_host, "--web-port", str(ns.web_port)]
    else:
        argv += ["--headless", "--only-summary"] + ([] if searching else ["-t", f"{ns.duration}s"])
    for opt in OPTIONS + (CEILING_OPTIONS if searching else ()):  # only what was given: Locust applies LOCUST_*
        value = getattr(ns, opt.dest)
        if opt.secret or value is None:
            continue
        if opt.is_switch or value != "" or opt.blank:
            argv += opt.argv(value)  # --flag=value: a value beginning with - stays a value
    return argv + extra


def _check_web(host: str, web_port: int) -> None:
    """The web UI's address can be bound now (a socket bound, then closed): else one line before anything starts."""
    valid = "valid: an address of this machine (127.0.0.1, 0.0.0.0, * for all) and a port nothing else listens on"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            None if host in ("", "*") else host, web_port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (OSError, UnicodeError, ValueError) as err:
        raise UsageError(f"--web-host {host!r}: not an address of this machine ({err}); {valid}") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Locust's web server (gevent) binds
        try:
            probe.bind(address)
        except OSError as err:
            flag = f"--web-host {host!r}" if err.errno == errno.EADDRNOTAVAIL else f"--web-port {web_port}"
            raise UsageError(f"{flag}: {host}:{web_port} cannot be bound ({err.strerror}); {valid}") from None


def run(ns: argparse.Namespace, extra: list[str]) -> NoReturn:
    """Validate everything (one line, exit 2 on bad input), then hand over to Locust: nothing is sent before."""
    if ns.command == "run":  # a traffic profile's workload, as the run's own options
        from ..traffic.run_replay import replayed

        replayed(ns)
    for opt in (RUN_OPTIONS if ns.command == "run" else ()) + RUNNER_OPTIONS:
        setattr(ns, opt.dest, opt.value(ns))
    settings = Settings.from_options(ns, users=ns.users if ns.command == "run" else 0)  # every rule, before anything starts
    if ns.command == "ceiling":
        _check_search(ns, settings, extra)
    if settings.out:
        check_out(settings.out, overwrite=settings.overwrite)
    if ns.web:
        _check_web(ns.web_host, ns.web_port)
    if ns.connection_string:
        print(f"loadtest: warning: {SECRET_ON_COMMAND_LINE}", file=sys.stderr)
        os.environ[CONNECTION_STRING_ENV] = ns.connection_string
        os.environ[FROM_FLAG_ENV] = "1"  # so the log names where the target came from
    argv = _locust_argv(ns, extra)
    import locust.main

    sys.argv = argv
    locust.main.main()
    sys.exit(EXIT_OK)  # main() exits itself; this is never reached


def _check_search(ns: argparse.Namespace, settings: Settings, extra: list[str]) -> None:
    """The search's own rules: its plan, and no other offered load, users or time beside its steps."""
    from ..ceiling.plan import Plan

    for arg in extra:
        if arg.split("=", 1)[0] in SEARCH_SETS:
            flag = arg.split("=", 1)[0]
            raise UsageError(
                f"{flag}: the ceiling search sets the users itself (each step's load over each user's rate) and runs "
                "until a step gives way or --ceiling-max; set --ceiling-start, --ceiling-step, --ceiling-max, --step-time"
            )
    for flag, value in (("--rate", settings.rate), ("--arrival-rate", settings.arrival_rate)):
        if value:
            raise UsageError(f"{flag} {value:g}: the ceiling search sets the offered load itself (its steps); leave {flag} out")
    plan = Plan.from_options(ns)
    if plan.users(plan.steps - 1) > MAX_USERS:
        raise UsageError(
            f"--ceiling-max {plan.maximum}: its last step needs {plan.users(plan.steps - 1):,} users at "
            f"{plan.user_rate}/s each, over {MAX_USERS:,}; lower it, or make --ceiling-start and --ceiling-step "
            "multiples of 10 (each user then offers 10/s)"
        )


def compare_strategies(ns: argparse.Namespace, run_args: list[str]) -> int:
    from ..report import render_comparison
    from ..workload.key_specs import strategy_list
    from .compare import compare, split_designs

    given = {opt.dest: opt.value(ns) for opt in COMPARE_OPTIONS + of("compare", OPTIONS)}  # --junit checked now
    strategies = strategy_list(given["strategies"])
    if "--key-strategy" in run_args:
        raise UsageError("compare: give the strategies with --strategies, not --key-strategy")
    designs = None
    if given["split_hot"]:
        if strategies:
            raise UsageError("compare: --strategies and --split-hot: give one (--split-hot compares a replayed profile's splits)")
        if not given["simulate"] or not any(a == "--traffic" or a.startswith("--traffic=") for a in run_args):
            raise UsageError("--split-hot: it splits a replayed profile's hot partitions: give --simulate and --traffic FILE")
        designs = split_designs(given["split_hot"])
    out = Path(given["out"] or Path("reports") / f"compare-{new_run_id()}")
    comparison = compare(strategies, run_args, out, simulate=given["simulate"], designs=designs, junit_file=given["junit"])
    print(f"Comparison: {render_comparison(comparison, out)}\n  {comparison.recommendation}")
    return EXIT_OK


def emulate(ns: argparse.Namespace) -> int:
    from ..emulator.budgets import Budgets
    from ..emulator.relay import serve

    budgets = Budgets(**{opt.dest: opt.value(ns) for opt in EMULATOR_OPTIONS})
    where = {opt.dest: opt.value(ns) for opt in (*SERVE_OPTIONS, REQUEST_LOG)}
    serve(
        where["upstream"],
        where["host"],
        where["port"],
        budgets,
        splits_file=Path(where["splits_file"]) if where["splits_file"] else None,
        request_log=Path(where["request_log"]) if where["request_log"] else None,
    )
    return EXIT_OK


def report(ns: argparse.Namespace) -> int:
    from ..report import render
    from ..results.form import Results, SeriesMissing

    path = Path(REPORT_OPTIONS[0].value(ns))
    results_file = path / RESULTS_FILE if path.is_dir() else path
    if not results_file.is_file():
        raise UsageError(f"{ns.path}: no results.json there; give a run's folder (reports/<run-id>) or its results.json")
    try:
        results = Results.load_file(results_file)  # every field checked against its type (JSON errors are ValueErrors)
    except SeriesMissing as err:
        raise UsageError(f"{results_file}: {err}; copy the run's folder whole") from None
    except ValueError as err:
        raise UsageError(f"{results_file}: not a partition-stress results.json: {err}") from None
    print(render(results, results_file.parent))
    return EXIT_OK


def _misspelt(parser: argparse.ArgumentParser, command: str | None, extra: list[str]) -> None:
    """An unknown flag close to one of the command's own: the tool's "did you mean", before Locust (which knows
    only its own flags and ours under other names) suggests another."""
    commands = parser._subparsers._group_actions[0].choices if parser._subparsers else {}  # noqa: SLF001
    if command not in commands:
        return
    mine = [commands[command]] + ([commands["run"]] if command == "compare" else [])  # compare hands the rest to runs
    own = [flag for sub in mine for action in sub._actions for flag in action.option_strings if flag.startswith("--")]
    for arg in extra:
        flag = arg.split("=", 1)[0]
        if not flag.startswith("--"):
            continue
        if flag in TOOL_FLAGS:  # an option of another command: the command's own rule names it (simulate: real runs')
            continue
        close = difflib.get_close_matches(flag, own, n=1, cutoff=0.75)
        if close and not (command in ("run", "ceiling", "compare") and flag in locust_flags()):
            raise UsageError(
                f"{flag}: no such option of loadtest {command}; did you mean {close[0]}? (see loadtest {command} --help)"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    ns, extra = parser.parse_known_args(argv)
    try:
        _misspelt(parser, ns.command, extra)
        if ns.command in ("run", "ceiling"):
            run(ns, extra)
        if ns.command == "compare":
            return compare_strategies(ns, extra)
        if ns.command == "simulate":
            from ..simulator.simulate_command import simulate

            return simulate(ns, extra)
        if ns.command == "advise":
            from ..advice.advise_command import advise

            return advise(ns, extra)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if ns.command == "report":
            return report(ns)
        if ns.command == "merge":
            from ..engines.merge_command import merge_command

            return merge_command(ns)
        if ns.command == "traffic":
            from ..traffic.traffic_command import traffic_command

            return traffic_command(ns)
        if ns.command == "cleanup":
            from ..engines.cleanup import cleanup_command

            return cleanup_command(ns)
        if ns.command == "emulator":
            return emulate(ns)
        if ns.command == "locustfile":
            print(LOCUSTFILE)
            return 0
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    except ToolError as err:
        print(error_line(str(err)), file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
