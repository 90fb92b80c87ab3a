"""The throttling emulator's options, declared once: ``loadtest emulator --X`` takes them with its own defaults, a
stress test as ``--emulator-X`` (``emulator_options``); and where it writes what it relays (``--request-log``).
"""

from __future__ import annotations

from dataclasses import replace

from ..emulator.budgets import Budgets
from ..service.entities import MAX_PAGE_ENTITIES
from . import rules
from .option import REAL_RUN, STRESS_TEST, Option, only
from .values import non_negative, number, positive, share, switch, whole

__all__ = ["EMULATOR_OPTIONS", "REQUEST_LOG", "emulator_options"]

#: The emulator's options, with its own defaults: ``loadtest emulator --X`` and ``loadtest run --emulator-X``.
EMULATOR_OPTIONS: tuple[Option, ...] = only(
    "emulator",
    (
        Option(("--partition-rate",), "budget per PartitionKey, entities/s", Budgets.partition_rate, positive),
        Option(("--account-rate",), "budget per account, entities/s", Budgets.account_rate, positive),
        Option(
            ("--burst",),
            "seconds of budget each token bucket holds: how long a burst over the budget goes unthrottled",
            Budgets.burst,
            number("a number of seconds from 0.01 to 60", lambda n: 0.01 <= n <= 60),
        ),
        Option(
            ("--timeout-share",), "share of throttled answers given as 500 OperationTimedOut (0-1)", Budgets.timeout_share, share
        ),
        Option(
            ("--server-rate",),
            "model range partitions on partition servers of this many entities/s (0 = per-key and account budgets only)",
            Budgets.server_rate,
            non_negative,
        ),
        Option(
            ("--per-key-only",),
            "give each PartitionKey its own budget and nothing more: without it the range where new keys land at each "
            "end of the key order (keys at or past the largest written, or at or before the smallest) is one range "
            "partition with one budget, as Azure serves an increasing or decreasing key design",
            Budgets.per_key_only,
            switch,
        ),
        Option(("--lb-delay",), "seconds a range stays over budget before it is split and moved", Budgets.lb_delay, non_negative),
        Option(("--lb-offline",), "seconds a moved range is offline (503s)", Budgets.lb_offline, non_negative),
        Option(
            ("--page-rows",),
            "rows a query's answer holds at most, then a continuation token, as Azure cuts pages at partition-server "
            "boundaries (0 = as the table service pages)",
            Budgets.page_rows,
            whole(minimum=0, maximum=MAX_PAGE_ENTITIES),
        ),
    ),
)

#: Every request the emulator relays, as Azure's diagnostic setting archives it (or the classic form, to a ``*.log``):
#: ``loadtest emulator`` and a run with ``--emulate-throttling`` write it, ``loadtest traffic`` reads it.
REQUEST_LOG = Option(
    ("--request-log",),
    "write every request the throttling emulator relays to this file as Azure's diagnostic logs archive them (one JSON "
    "record a line, throttled answers included), or, to a *.log, as Storage Analytics' classic logs do; for "
    "`loadtest traffic`",
    "",
    rules.file_to_write,
    commands=REAL_RUN | {"emulator"},
)


def _emulator(option: Option) -> Option:
    flag = "--emulator-" + option.flags[0][2:]
    return replace(option, flags=(flag,), help=f"the emulator's {option.help}", commands=STRESS_TEST)


def emulator_options() -> tuple[Option, ...]:
    """The emulator's budgets as a stress test takes them: ``--emulator-X``."""
    return tuple(map(_emulator, EMULATOR_OPTIONS))
