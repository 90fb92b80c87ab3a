"""The commands' own options (users and time, how Locust runs, a comparison, the emulator's address, a simulation's
step, a merge, a cleanup, a report; the logs' in ``traffic``), and which options each command registers.

Each is declared once with the commands that take it (``Option.commands``); what a command refuses or shares is
derived from that field, never listed by hand.
"""

from __future__ import annotations

from dataclasses import replace

from ..account.connection_string import CONNECTION_STRING_ENV
from ..emulator.process import checked_upstream
from ..exit_codes import UsageError
from ..limits import MAX_DURATION_S, MAX_USERS, MAX_WORKERS
from . import rules
from .advise import ADVISE_OPTIONS
from .emulator import EMULATOR_OPTIONS
from .option import REAL_RUN, Option, of, only
from .stress import CEILING_OPTIONS, OPTIONS
from .traffic import TRAFFIC_OPTIONS
from .values import duration, number, port, switch, text, texts, whole

__all__ = [
    "CLEANUP_OPTIONS",
    "COMMANDS",
    "COMPARE_OPTIONS",
    "DURATION",
    "MERGE_OPTIONS",
    "REAL_RUN_ONLY",
    "REPLAY_OPTIONS",
    "REPORT_OPTIONS",
    "RUNNER_OPTIONS",
    "RUN_OPTIONS",
    "SEARCH_SETS",
    "SERVE_OPTIONS",
    "SIMULATE_OPTIONS",
    "SIMULATION_REFUSES",
    "refuse_extra",
]

#: ``loadtest run``'s users and time (Locust's ``-u``, ``-r``, ``-t``; a ceiling search sets them itself).
RUN_OPTIONS: tuple[Option, ...] = (
    Option(
        ("-u", "--users"),
        f"concurrent Locust users (at most {MAX_USERS:,})",
        10,
        whole(minimum=1, maximum=MAX_USERS, unit=" (each user holds its own connection)"),
        locust=False,
        commands=frozenset({"run"}),
    ),
    Option(
        ("-r", "--spawn-rate"),
        "users started per second",
        2,
        number(f"users per second from 0.001 to {MAX_USERS}", lambda n: 0.001 <= n <= MAX_USERS),
        locust=False,
        commands=frozenset({"run"}),
    ),
    DURATION := Option(
        ("-t", "--duration"),
        "how long the load runs: 90, 90s, 2m, 1h30m",
        "60s",
        duration(maximum=MAX_DURATION_S),
        locust=False,
        commands=frozenset({"run", "simulate"}),
    ),
)
#: How ``loadtest run`` and ``loadtest ceiling`` run Locust: processes, and headless or its web UI.
RUNNER_OPTIONS: tuple[Option, ...] = tuple(
    replace(opt, commands=REAL_RUN)
    for opt in (
        Option(
            ("--workers",),
            f"Locust worker processes beside the master (Locust's --processes; 0 = one process; at most {MAX_WORKERS})",
            0,
            whole(minimum=0, maximum=MAX_WORKERS, unit=" processes on this machine"),
            locust=False,
        ),
        Option(("--web",), "open Locust's web UI instead of running headless", False, switch, locust=False),
        Option(("--web-host",), "web UI address", "127.0.0.1", locust=False),
        Option(("--web-port",), "web UI port", 8089, port, locust=False),
    )
)
#: ``loadtest compare``'s own (the rest go to each run).
COMPARE_OPTIONS: tuple[Option, ...] = only(
    "compare",
    (
        Option(("--strategies",), "two or more, comma list: single,hash-prefix:16,guid,… (or --split-hot)", locust=False),
        Option(
            ("--split-hot",),
            "with --simulate --traffic: the logged design against its hot partitions split, comma list of ways: 1,4,16 "
            "(1: as logged)",
            "",
            rules.split_ways,
            locust=False,
        ),
        Option(("--out",), "folder for comparison.html and one folder per run (default reports/compare-<id>)", locust=False),
        Option(("--simulate",), "run `loadtest simulate` per strategy instead of `loadtest run`", False, switch, locust=False),
    ),
)
#: ``loadtest emulator``'s address and upstream (its budgets: ``EMULATOR_OPTIONS``).
SERVE_OPTIONS: tuple[Option, ...] = only(
    "emulator",
    (
        Option(
            ("--upstream",), "the table service, e.g. http://127.0.0.1:10002", "", checked_upstream, locust=False, required=True
        ),
        Option(("--host",), "address to listen on", "127.0.0.1", locust=False),
        Option(("--port",), "port to listen on", 10102, port, locust=False),
        Option(
            ("--splits-file",),
            "append each range split (--server-rate) to this file as a JSON line: keys, wall-clock time, offline until",
            "",
            locust=False,
        ),
    ),
)
#: A traffic profile replayed (``loadtest traffic LOGS --profile-out``): by a simulation over its span, or by a real run.
REPLAY_OPTIONS: tuple[Option, ...] = tuple(
    replace(opt, commands=frozenset({"simulate", "run", "advise"}))
    for opt in (
        Option(
            ("--traffic",),
            "replay a traffic profile (loadtest traffic LOGS --profile-out FILE): its partitions and mix stand for the "
            "workload options, and its rate for the load (simulate: over its span; run: its busiest bin's, held, open "
            "loop); -t (default: its span) takes its first seconds",
            "",
            locust=False,
        ),
        Option(
            ("--scale",),
            "with --traffic: the profile's demand times this (10: ten times production); or give --arrival-rate for its peak",
            1.0,
            number("a multiple above 0 and at most 1000, e.g. 10 or 0.5", lambda n: 0 < n <= 1000),
            locust=False,
        ),
        Option(
            ("--unattributed",),
            "with --traffic: demand that named no partition (inserts, batches) spread as the attributed demand of its op "
            "class is (the same keys), or apart (each a key of its own)",
            "spread",
            rules.unattributed,
            locust=False,
        ),
    )
)
#: ``loadtest simulate``'s own (the workload, the budgets (``--emulator-*``) and the duration are a run's).
SIMULATE_OPTIONS: tuple[Option, ...] = (
    *only(
        "simulate",
        (
            Option(
                ("--step",),
                "seconds of virtual time per tick, a whole fraction of a second: 0.1, 0.05, 1 (smaller: finer retries and "
                "bursts, slower)",
                0.1,
                number(
                    "seconds from 0.001 to 1 that divide one second evenly (1/step a whole number), e.g. 0.1",
                    lambda n: 0.001 <= n <= 1 and abs(round(1 / n) * n - 1) < 1e-9,
                ),
                locust=False,
            ),
        ),
    ),
    *REPLAY_OPTIONS,
    *only(
        "simulate",
        (
            Option(
                ("--split-hot",),
                "with --traffic: the docs' remedy, each partition whose demand at the peak is over the partition target "
                "spread over this many keys (its demand shared evenly)",
                1,
                whole(minimum=1, maximum=1000, unit=" keys a hot partition is spread over"),
                locust=False,
            ),
        ),
    ),
)
#: ``loadtest report PATH``.
REPORT_OPTIONS: tuple[Option, ...] = only(
    "report",
    (Option(("path",), "a run's folder (reports/<run-id>) or its results.json", parse=text, locust=False),),
)

#: ``loadtest merge``'s own, then the stress test's it shares (those marked for it): the outputs and the target.
MERGE_OPTIONS: tuple[Option, ...] = only(
    "merge",
    (
        Option(
            ("sources",),
            "engines' folders (reports/<run-id>/<engine>) or results.json files",
            parse=texts,
            locust=False,
            many=True,
        ),
        Option(
            ("--from-container",),
            "read every engine's results.json from CONTAINER/<run-id>/ in the target's storage account (what --upload wrote)",
            "",
            rules.container,
            locust=False,
        ),
    ),
) + of("merge", OPTIONS)

#: ``loadtest cleanup``: what a ``--run-id`` run left on purpose, named on the command line (no ``LOCUST_*`` guess).
_CLEANUP_HELP = {
    "run_id": "the run whose shared table to remove, as its engines were given it",
    "table": "the table the run was given with --table (default: the one named from --run-id)",
    "connection_string": f"connection string of the account the run used (or ${CONNECTION_STRING_ENV})",
}
CLEANUP_OPTIONS: tuple[Option, ...] = tuple(
    replace(
        opt,
        help=_CLEANUP_HELP.get(opt.dest, opt.help),
        locust=opt.locust and opt.dest not in ("run_id", "table"),
        required=opt.dest == "run_id",
    )
    for opt in of("cleanup", OPTIONS)
)

#: Every command's options, as its parser registers them, in titled groups (``locust -f`` registers ``OPTIONS``).
COMMANDS: dict[str, tuple[tuple[str, tuple[Option, ...]], ...]] = {
    "run": (
        ("how Locust runs", of("run", RUN_OPTIONS, RUNNER_OPTIONS)),
        ("partition-stress", OPTIONS),
        ("a traffic profile replayed", of("run", REPLAY_OPTIONS)),
    ),
    "ceiling": (
        ("how Locust runs", of("ceiling", RUNNER_OPTIONS)),
        ("partition-stress", OPTIONS),
        ("the steps", CEILING_OPTIONS),
    ),
    "simulate": (
        ("the simulation", of("simulate", RUN_OPTIONS, SIMULATE_OPTIONS)),
        ("partition-stress", of("simulate", OPTIONS)),
    ),
    "compare": (("the comparison", COMPARE_OPTIONS + of("compare", OPTIONS)),),
    "advise": (
        ("the advice", ADVISE_OPTIONS),
        ("a traffic profile as the workload", of("advise", REPLAY_OPTIONS)),
        ("the workload and its peak", of("advise", OPTIONS)),
    ),
    "emulator": (("where it listens", SERVE_OPTIONS + of("emulator", OPTIONS)), ("its budgets", EMULATOR_OPTIONS)),
    "merge": (("the engines", MERGE_OPTIONS),),
    "cleanup": (("the run", CLEANUP_OPTIONS),),
    "report": (("the run", REPORT_OPTIONS),),
    "traffic": (("the logs", TRAFFIC_OPTIONS),),
}
#: The stress test's options a simulation refuses (it sends nothing: nothing to connect, spawn or show live).
REAL_RUN_ONLY = tuple(opt.dest for opt in OPTIONS if "simulate" not in opt.commands)
#: Flags of a real run a simulation refuses, with Locust's own names for them (``--processes`` is ``--workers``).
SIMULATION_REFUSES = tuple(
    flag for opt in (*RUN_OPTIONS, *RUNNER_OPTIONS, *OPTIONS) if "simulate" not in opt.commands for flag in opt.flags
) + ("--processes",)


def refuse_extra(extra: list[str], command: str, why: str) -> None:
    """The arguments a command that sends nothing was left with: a real run's flag named with ``why``, anything else
    unrecognized; one line either way (``UsageError``)."""
    for arg in extra:
        flag = arg.split("=", 1)[0]
        if flag in SIMULATION_REFUSES:
            raise UsageError(f"{flag}: {why}")
        raise UsageError(f"unrecognized arguments: {' '.join(extra)} (see loadtest {command} --help)")


#: Locust's options a ceiling search sets itself (its shape: users from each step's load, time from the steps):
#: a run's users and time, by our flags and Locust's.
SEARCH_SETS = tuple(flag for opt in RUN_OPTIONS for flag in opt.flags) + ("--hatch-rate", "--run-time")
