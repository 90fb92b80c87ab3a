"""Each option of the tool declared once: flags, help, default and parser.

``loadtest run`` and Locust's own parser (through ``init_command_line_parser``) both register
them from ``OPTIONS``, so the web UI's start form, ``locust -f`` and ``loadtest run`` accept the
same flags; ``loadtest emulator`` registers ``EMULATOR_OPTIONS``, which ``run`` has as
``--emulator-*``. ``config.Settings`` parses them all.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from . import option_parsers as rules
from .arrivals import ARRIVALS
from .emulator import Budgets
from .entities import MAX_BATCH_OPERATIONS, MAX_ENTITY_BYTES
from .operations import BATCH_OPERATIONS, MIX_OPERATIONS
from .option_parsers import FAIL_ON, PROFILES
from .parsers import (
    Parse,
    mix,
    non_negative,
    number,
    optional,
    parse_mix,
    positive,
    property_names,
    share,
    show_mix,
    switch,
    text,
    whole,
)
from .retry import DEFAULT_RETRY, RETRY_FORMS, RetryStrategy
from .skew import SKEWS
from .transport import CONNECT_TIMEOUT_S, TIMEOUT_S

__all__ = [
    "CEILING_OPTIONS",
    "CONNECTION_STRING_ENV",
    "EMULATOR_OPTIONS",
    "FAIL_ON",
    "FROM_FLAG_ENV",
    "SECRET_ON_COMMAND_LINE",
    "OPTIONS",
    "PROFILES",
    "Option",
    "add_options",
    "namespace",
    "parse_mix",
]

MAX_SEED_ENTITIES = 1_000_000
DEFAULT_MIX = "read=60,upsert=25,insert=5,batch=5,scan=5"
CONNECTION_STRING_ENV = "AZURE_STORAGE_CONNECTION_STRING"
MAX_TIMEOUT_S = 3600  # --timeout: an attempt waiting longer is no stress test (and sockets overflow near 1e9 s)
FROM_FLAG_ENV = "PARTITION_STRESS_CONNECTION_STRING_FROM_FLAG"  # loadtest run passes --connection-string this way
SECRET_ON_COMMAND_LINE = (
    f"--connection-string on the command line is visible to other local users (ps); set ${CONNECTION_STRING_ENV} instead"
)


@dataclass(frozen=True)
class Option:
    """One command-line option: flags, help, default and parser, registered alike with argparse and Locust."""

    flags: tuple[str, ...]
    help: str
    default: Any = ""
    parse: Parse = text
    show: Callable[[Any], Any] = lambda value: value  # the parsed value as a report shows it (and parses back)
    secret: bool = False  # never in the web UI's form or a report
    env: str | None = None  # read from this environment variable when not given
    blank: bool = False  # an empty value is a value (an empty PartitionKey), not "use the default"

    @property
    def dest(self) -> str:
        return self.flags[0].lstrip("-").replace("-", "_")

    @property
    def is_switch(self) -> bool:
        return self.parse is switch

    @property
    def locust_env(self) -> str:
        """Locust's convention: ``--partition-target`` is also ``LOCUST_PARTITION_TARGET``."""
        return f"LOCUST_{self.dest.upper()}"

    def value(self, options: argparse.Namespace) -> Any:
        """This option's parsed value: given, else ``LOCUST_<OPTION>``, else its own variable, else its default
        (Locust's parser has applied its environment and config files already; ``loadtest run``'s has not)."""
        raw, given = getattr(options, self.dest, None), self.flags[0]
        if raw is None or (raw == "" and not self.blank):
            for name in (self.locust_env, self.env):
                if name and os.environ.get(name):
                    raw, given = os.environ[name], f"${name}"  # an error names where the bad value came from
                    break
            else:
                raw = self.default
        return self.parse(given, raw)


#: The emulator's options, with its own defaults: ``loadtest emulator --X`` and ``loadtest run --emulator-X``.
EMULATOR_OPTIONS: tuple[Option, ...] = (
    Option(("--partition-rate",), "budget per PartitionKey, entities/s", Budgets.partition_rate, positive),
    Option(("--account-rate",), "budget per account, entities/s", Budgets.account_rate, positive),
    Option(
        ("--burst",),
        "seconds of budget each token bucket holds: how long a burst over the budget goes unthrottled",
        Budgets.burst,
        number("a number of seconds from 0.01 to 60", lambda n: 0.01 <= n <= 60),
    ),
    Option(("--timeout-share",), "share of throttled answers given as 500 OperationTimedOut (0-1)", Budgets.timeout_share, share),
    Option(
        ("--server-rate",),
        "model range partitions on partition servers of this many entities/s (0 = per-key and account budgets only)",
        Budgets.server_rate,
        non_negative,
    ),
    Option(("--lb-delay",), "seconds a range stays over budget before it is split and moved", Budgets.lb_delay, non_negative),
    Option(("--lb-offline",), "seconds a moved range is offline (503s)", Budgets.lb_offline, non_negative),
)


#: ``loadtest ceiling``'s options (and ``locust -f`` with its shape): the steps of offered load and the p99 rule.
CEILING_OPTIONS: tuple[Option, ...] = (
    Option(("--ceiling-start",), "offered operations/s of the first step", 100, whole(minimum=1)),
    Option(("--ceiling-step",), "operations/s each step adds", 100, whole(minimum=1)),
    Option(("--ceiling-max",), "offered operations/s of the last step, at most", 20_000, whole(minimum=1)),
    Option(("--step-time",), "how long each step runs: 10, 10s, 1m (at least 3 s)", "10s", rules.step_time),
    Option(
        ("--max-p99",),
        "a step is good while its corrected p99 (from when each operation was due) stays at or under this many ms",
        500.0,
        positive,
    ),
)


def _emulator(option: Option) -> Option:
    flag = "--emulator-" + option.flags[0][2:]
    return replace(option, flags=(flag,), help=f"the emulator's {option.help}")


OPTIONS: tuple[Option, ...] = (
    Option(("--partition-key",), "PartitionKey the load aims at (the single strategy's key)", "hot", rules.key, blank=True),
    Option(
        ("--key-strategy",),
        "PartitionKey design: single, set:N, hash-prefix:N, guid, append-only, prepend-only, "
        "timestamp:FORMAT (e.g. yyyyMMddHHmm or ssyyyyMMddHHmm), template:TEXT (e.g. {event}__{distance})",
        "single",
    ),
    Option(
        ("--row-key-strategy",),
        "RowKeys of new entities: sequential, guid, append-only, prepend-only, timestamp:FORMAT",
        "sequential",
    ),
    Option(("--skew",), f"access skew over the keys: {', '.join(SKEWS)}", "uniform", rules.skew),
    Option(("--key-seed",), "seed of the key strategy and skew: the same seed, the same keys and accesses", 1, whole()),
    Option(("--select",), "properties reads and scans return ($select), comma list; default all", "", property_names, ",".join),
    Option(
        ("--batch-mix",),
        f"operations inside a batch, name=weight; names: {', '.join(BATCH_OPERATIONS)}",
        "upsert=100",
        mix(BATCH_OPERATIONS),
        show_mix,
    ),
    Option(
        ("--mix",),
        f"weighted operation mix, name=weight pairs; names: {', '.join(MIX_OPERATIONS)}",
        DEFAULT_MIX,
        mix(MIX_OPERATIONS),
        show_mix,
    ),
    Option(
        ("--entity-size",),
        "bytes per entity, as the service sizes it (targets assume 1 KiB)",
        1024,
        whole(minimum=1, maximum=MAX_ENTITY_BYTES, unit=" bytes (1 MiB)"),
    ),
    Option(("--properties",), "string properties the payload is spread over (0 = as few as fit)", 0, whole()),
    Option(
        ("--seed-entities",),
        f"entities seeded under the PartitionKey before the load (at most {MAX_SEED_ENTITIES:,})",
        1000,
        whole(
            minimum=1,
            maximum=MAX_SEED_ENTITIES,
            unit=" (seeding takes minutes a million; a zipfian skew keeps a table that long)",
        ),
    ),
    Option(
        ("--batch-size",),
        "operations per entity group transaction (at most 100)",
        MAX_BATCH_OPERATIONS,
        whole(minimum=1, maximum=MAX_BATCH_OPERATIONS, unit=" (an entity group transaction holds at most 100 operations)"),
    ),
    Option(("--scan-size",), "rows a row range scan asks for", 100, whole(minimum=1)),
    Option(("--profile",), "scalability targets: current (2000/20000) or legacy (500/5000)", "current", rules.profile),
    Option(("--partition-target",), "entities/s per partition (default: the profile's)", None, optional(whole(minimum=1))),
    Option(("--account-target",), "entities/s per account (default: the profile's)", None, optional(whole(minimum=1))),
    Option(
        ("--fail-on",),
        f"exit 3 when any of these findings occurs: never or a comma list of {', '.join(k.lower() for k in FAIL_ON)}",
        "never",
        rules.fail_on,
        lambda kinds: ",".join(k.lower() for k in kinds) or "never",
    ),
    Option(("--out",), "folder for report.html, results.json and timeseries.csv (default reports/<run-id>)"),
    Option(("--overwrite",), "let --out replace an earlier run's files", False, switch),
    Option(
        ("--connection-string",),
        f"storage connection string (or ${CONNECTION_STRING_ENV}); default: an embedded Azurite",
        parse=rules.connection_string,
        secret=True,
        env=CONNECTION_STRING_ENV,
    ),
    Option(
        ("--account-url",),
        "https://<account>.table.core.windows.net, signed in with DefaultAzureCredential",
        "",
        rules.account_url,
    ),
    Option(("--table",), "test table name (default: a new, unique one)", "", rules.table),
    Option(("--reuse-table",), "write to the existing --table (never deleted)", False, switch),
    Option(("--keep-table",), "keep the test table after the run", False, switch),
    Option(
        ("--client",),
        "table client: fast (a lean REST client, about 4x cheaper per operation) or sdk (azure-data-tables: "
        "the latencies an application sees through the SDK)",
        "fast",
        rules.client,
    ),
    Option(
        ("--timeout",),
        f"seconds an attempt waits for the service's answer, for table set-up and load alike (connecting: at most "
        f"{CONNECT_TIMEOUT_S:g} s); a timed-out attempt is an error with code Timeout, retried as connection errors are",
        TIMEOUT_S,
        number(f"a positive number of seconds, at most {MAX_TIMEOUT_S}", lambda n: 0 < n <= MAX_TIMEOUT_S),
    ),
    Option(
        ("--retry",), f"retry strategy: {RETRY_FORMS}; every attempt is counted", DEFAULT_RETRY, rules.retry, RetryStrategy.spec
    ),
    Option(
        ("--emulate-throttling",),
        "put the throttling emulator (token buckets per PartitionKey and account) in front of the table service",
        False,
        switch,
    ),
    *map(_emulator, EMULATOR_OPTIONS),
    Option(("--skip-verify",), "do not read the table back after the run to check every acknowledged write", False, switch),
    Option(("--rate",), "operations/s per user, a fixed offered load (0 = closed loop, as fast as answered)", 0.0, non_negative),
    Option(
        ("--arrival-rate",),
        "open loop: operations/s for the whole run, spread over the users, each due at its time whatever the service's "
        "pace; late ones are timed from when they were due, overdue ones dropped and counted (0 = off)",
        0.0,
        non_negative,
    ),
    Option(("--arrivals",), f"how --arrival-rate's operations arrive: {', '.join(ARRIVALS)}", "constant", rules.arrivals),
)


def add_options(parser: argparse.ArgumentParser, options: tuple[Option, ...] = OPTIONS) -> None:
    """Register options with argparse or with Locust's parser (values are parsed later, by ``Settings``).

    Locust's parser gives each its ``LOCUST_<OPTION>`` variable and reads ``locust.conf`` / ``--config``, with
    Locust's precedence (command line, environment, config file, default). ``loadtest run``'s parser leaves
    options not given at ``None``, so that only what was given reaches Locust's command line.
    """
    locust_parser = hasattr(parser, "args_included_in_web_ui")
    # Locust's parser takes its web-UI keywords on add_argument itself, not on groups
    group = parser if locust_parser else parser.add_argument_group("partition-stress")
    for opt in options:
        if any(flag in getattr(parser, "_option_string_actions", {}) for flag in opt.flags):
            continue  # Locust's own --profile has the same dest: its value is ours
        # argparse formats help with %: a literal % (as in hotspot:OPS%,KEYS%) must be doubled
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": opt.help.replace("%", "%%")}
        if opt.is_switch:
            kwargs.update(action="store_true", default=False if locust_parser else None)
        else:
            kwargs.update(type=str, default=("" if opt.default is None else str(opt.default)) if locust_parser else None)
        if locust_parser:
            # secrets stay out of the web UI's form: its page would carry the value
            kwargs.update(include_in_web_ui=not opt.secret, env_var=opt.locust_env)
        group.add_argument(*opt.flags, **kwargs)


def namespace(**overrides: Any) -> argparse.Namespace:
    """Defaults for every option, with overrides: what a User class falls back to outside a run."""
    values = {opt.dest: opt.default for opt in OPTIONS}
    values.update(overrides)
    return argparse.Namespace(**values)
