"""Every option of the tool declared once (flags, help, default, parser), and every limit on their values.

``loadtest run`` and Locust's own parser (through ``init_command_line_parser``) both register the stress test's
``OPTIONS``, so the web UI's start form, ``locust -f`` and ``loadtest run`` accept the same flags; ``loadtest
emulator`` registers ``EMULATOR_OPTIONS``, which ``run`` has as ``--emulator-*``. The commands' own options (users,
duration, workers, the web UI's address, ``compare``, ``emulator`` and ``report``) are here too: ``cli`` declares
none. ``config.Settings`` parses the stress test's; ``Option.value`` any one.
"""

from __future__ import annotations

from dataclasses import replace

from . import option_parsers as rules
from .arrivals import ARRIVALS
from .connection_string import CONNECTION_STRING_ENV
from .emulator.budgets import Budgets
from .entities import MAX_BATCH_OPERATIONS, MAX_ENTITY_BYTES, MAX_PAGE_ENTITIES
from .operations import BATCH_OPERATIONS, MIX_OPERATIONS
from .option import Option
from .option_parsers import FAIL_ON
from .parsers import (
    duration,
    mix,
    non_negative,
    number,
    optional,
    port,
    positive,
    property_names,
    share,
    show_mix,
    switch,
    text,
    texts,
    whole,
)
from .profiles import DEFAULT_PROFILE, PROFILES
from .retry import DEFAULT_RETRY, RETRY_FORMS, RetryStrategy
from .target import CONNECT_TIMEOUT_S, TIMEOUT_S

__all__ = [
    "CEILING_OPTIONS",
    "CLEANUP_OPTIONS",
    "FORM_FIXED",
    "FORM_GROUPS",
    "FORM_HELP",
    "DURATION",
    "COMPARE_OPTIONS",
    "EMULATOR_OPTIONS",
    "MAX_DURATION_S",
    "OPTION_BY_DEST",
    "MAX_USERS",
    "MAX_USER_ARRIVAL_RATE",
    "MERGE_OPTIONS",
    "OPTIONS",
    "REAL_RUN_ONLY",
    "REPORT_OPTIONS",
    "RUNNER_OPTIONS",
    "RUN_OPTIONS",
    "SERVE_OPTIONS",
    "SIMULATE_OPTIONS",
]

# --- the limits on the options' values ------------------------------------------------------

#: One machine's worth: each user holds its own connection. More users: Locust's --master/--worker across machines.
MAX_USERS = 10_000
MAX_WORKERS = 64  # Locust's --processes forks them all on this machine
#: The longest run: a week of per-second buckets is already a soak test, and Locust overflows on far longer spans.
MAX_DURATION_S = 7 * 24 * 3600
MAX_TIMEOUT_S = 3600  # --timeout: an attempt waiting longer is no stress test (and sockets overflow near 1e9 s)
MAX_SEED_ENTITIES = 1_000_000
#: A scan is one operation, counted in the second it ends: 100,000 rows are 100 full pages and 50 s of a partition's
#: 2,000 entities/s. Scanning more is several scans (and its second would hold a minute's entities).
MAX_SCAN_ROWS = 100_000
MIN_STEP_S = 3  # a ceiling step: a second to settle, two whole seconds measured

DEFAULT_MIX = "read=60,upsert=20,insert=5,delete=5,batch=5,scan=5"
MAX_SIMULATED_RATE = 10**7  # operations/s a simulation takes: beyond, no table design is being asked about
#: An open loop's user starts one operation at a time and waits for its answer: no more than one a millisecond. Past
#: that its schedule only drops slots (at 10^12/s, billions a second, and the run hung enumerating them).
MAX_USER_ARRIVAL_RATE = 1000
#: An open loop's operations in flight at once per process, by default: each holds a greenlet and a keep-alive
#: connection (24 KB in flight, bench/in_flight_memory.py), so 5,000 take about 115 MB and fit within the 10,000 open
#: files Locust allows itself.
DEFAULT_MAX_IN_FLIGHT = 5_000
MAX_IN_FLIGHT = 50_000  # past this, the open files and memory of one process give out first

# --- the commands' own options (Locust's users, time and processes, as loadtest run sets them) -------------

#: ``loadtest run``'s users and time (Locust's ``-u``, ``-r``, ``-t``; a ceiling search sets them itself).
RUN_OPTIONS: tuple[Option, ...] = (
    Option(
        ("-u", "--users"),
        f"concurrent Locust users (default 10, at most {MAX_USERS:,})",
        10,
        whole(minimum=1, maximum=MAX_USERS, unit=" (each user holds its own connection)"),
        locust=False,
    ),
    Option(
        ("-r", "--spawn-rate"),
        "users started per second (default 2)",
        2,
        number(f"users per second from 0.001 to {MAX_USERS}", lambda n: 0.001 <= n <= MAX_USERS),
        locust=False,
    ),
    DURATION := Option(
        ("-t", "--duration"),
        "how long the load runs: 90, 90s, 2m, 1h30m (default 60s)",
        "60s",
        duration(maximum=MAX_DURATION_S),
        locust=False,
    ),
)
#: How ``loadtest run`` and ``loadtest ceiling`` run Locust: processes, and headless or its web UI.
RUNNER_OPTIONS: tuple[Option, ...] = (
    Option(
        ("--workers",),
        f"Locust worker processes beside the master (Locust's --processes; 0 = one process; at most {MAX_WORKERS})",
        0,
        whole(minimum=0, maximum=MAX_WORKERS, unit=" processes on this machine"),
        locust=False,
    ),
    Option(("--web",), "open Locust's web UI instead of running headless", False, switch, locust=False),
    Option(("--web-host",), "web UI address (default 127.0.0.1)", "127.0.0.1", locust=False),
    Option(("--web-port",), "web UI port (default 8089)", 8089, port, locust=False),
)
#: ``loadtest compare``'s own (the rest go to each run).
COMPARE_OPTIONS: tuple[Option, ...] = (
    Option(("--strategies",), "two or more, comma list: single,hash-prefix:16,guid,…", locust=False, required=True),
    Option(("--out",), "folder for comparison.html and one folder per run (default reports/compare-<id>)", locust=False),
    Option(("--simulate",), "run `loadtest simulate` per strategy instead of `loadtest run`", False, switch, locust=False),
)
#: ``loadtest emulator``'s address and upstream (its budgets: ``EMULATOR_OPTIONS``).
SERVE_OPTIONS: tuple[Option, ...] = (
    Option(("--upstream",), "the table service, e.g. http://127.0.0.1:10002", locust=False, required=True),
    Option(("--host",), "address to listen on (default 127.0.0.1)", "127.0.0.1", locust=False),
    Option(("--port",), "port to listen on (default 10102)", 10102, port, locust=False),
    Option(
        ("--splits-file",),
        "append each range split (--server-rate) to this file as a JSON line: keys, wall-clock time, offline until",
        "",
        locust=False,
    ),
)
#: ``loadtest simulate``'s own (the workload, the budgets (``--emulator-*``) and the duration are a run's).
SIMULATE_OPTIONS: tuple[Option, ...] = (
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
)
#: The stress test's options a simulation has no use for (it sends nothing): ``loadtest simulate`` refuses them.
REAL_RUN_ONLY = ("connection_string", "account_url", "client", "table", "reuse_table", "keep_table", "timeout", "rate")
REAL_RUN_ONLY += ("skip_verify", "emulate_throttling", "run_id", "engine", "upload", "max_in_flight")
#: ``loadtest report PATH``.
REPORT_OPTIONS: tuple[Option, ...] = (
    Option(("path",), "a run's folder (reports/<run-id>) or its results.json", parse=text, locust=False),
)

# --- the stress test's options ----------------------------------------------------------------

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
    Option(
        ("--page-rows",),
        "rows a query's answer holds at most, then a continuation token, as Azure cuts pages at partition-server "
        "boundaries (0 = as the table service pages)",
        Budgets.page_rows,
        whole(minimum=0, maximum=MAX_PAGE_ENTITIES),
    ),
)


#: ``loadtest ceiling``'s options (and ``locust -f`` with its shape): the steps of offered load and the p99 rule.
CEILING_OPTIONS: tuple[Option, ...] = (
    Option(("--ceiling-start",), "offered operations/s of the first step", 100, whole(minimum=1)),
    Option(("--ceiling-step",), "operations/s each step adds", 100, whole(minimum=1)),
    Option(
        ("--ceiling-max",),
        "offered operations/s of the last step, at most (default: the account's target)",
        PROFILES[DEFAULT_PROFILE].account,
        whole(minimum=1),
    ),
    Option(
        ("--step-time",),
        f"how long each step runs: 10, 10s, 1m (at least {MIN_STEP_S} s)",
        "10s",
        duration(maximum=MAX_DURATION_S, minimum=MIN_STEP_S, why=f"a step must run at least {MIN_STEP_S} s to be measured"),
    ),
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
    Option(
        ("--skew",),
        "access skew over the keys: uniform, zipfian[:theta] (default 0.99), hotspot:OPS,KEYS (e.g. hotspot:80,20: "
        "80 % of operations on 20 % of keys)",
        "uniform",
        rules.skew,
    ),
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
    Option(
        ("--scan-size",),
        f"rows a scan reads at most, page after page (at most {MAX_SCAN_ROWS:,})",
        100,
        whole(minimum=1, maximum=MAX_SCAN_ROWS, unit=" (a scan is one operation: scanning more is several scans)"),
    ),
    Option(
        ("--profile",),
        "scalability targets (entities/s per partition/account): "
        + " or ".join(f"{name} ({t.partition}/{t.account})" for name, t in PROFILES.items()),
        DEFAULT_PROFILE,
        rules.profile,
    ),
    Option(("--partition-target",), "entities/s per partition (default: the profile's)", None, optional(whole(minimum=1))),
    Option(("--account-target",), "entities/s per account (default: the profile's)", None, optional(whole(minimum=1))),
    Option(
        ("--fail-on",),
        f"exit 3 when any of these findings occurs: never or a comma list of {', '.join(k.lower() for k in FAIL_ON)}",
        "never",
        rules.fail_on,
        lambda kinds: ",".join(k.lower() for k in kinds) or "never",
    ),
    Option(("--out",), "folder for report.html, results.json, timeseries.csv and server-logs.kql (default reports/<run-id>)"),
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
        ("--run-id",),
        "a run several engines share (Azure Load Testing's, other machines): results carry it, outputs go to "
        "reports/<run-id>/<engine>/, and the engines use one table (--table, default named from the id), created and "
        "seeded once, each writing under its own RowKey prefix; none deletes it",
        "",
        rules.run_id,
    ),
    Option(("--engine",), "this engine's name within --run-id (default: the host name)", "", rules.engine),
    Option(
        ("--upload",),
        "blob container in the target's storage account that receives the outputs as CONTAINER/<run-id>/<engine>/, "
        "for `loadtest merge --from-container`",
        "",
        rules.container,
    ),
    Option(
        ("--client",),
        "the transport under each user's table session: fast (the lean REST transport, several times cheaper per operation) "
        "or sdk (azure-data-tables: the latencies an application sees through the SDK)",
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
        f"pace; late ones are timed from when they were due, overdue ones dropped and counted (0 = off; at most "
        f"{MAX_USER_ARRIVAL_RATE:,} per user)",
        0.0,
        number(f"operations/s, 0 or more and at most {MAX_SIMULATED_RATE:,}", lambda n: 0 <= n <= MAX_SIMULATED_RATE),
    ),
    Option(("--arrivals",), f"how --arrival-rate's operations arrive: {', '.join(ARRIVALS)}", "constant", rules.arrivals),
    Option(
        ("--max-in-flight",),
        "open loop: operations in flight at once per Locust process (each due operation runs on its own, retries and "
        "backoffs included, so a user never waits for an answer to keep its schedule); when all are busy, slots wait "
        "and may drop, and the run names the concurrency its schedule needed",
        DEFAULT_MAX_IN_FLIGHT,
        whole(minimum=1, maximum=MAX_IN_FLIGHT, unit=" (each holds a connection and a greenlet: add workers beyond)"),
    ),
)

#: Every stress-test option (and the ceiling search's) by its dest: what a class attribute or a form field names.
OPTION_BY_DEST: dict[str, Option] = {opt.dest: opt for opt in (*OPTIONS, *CEILING_OPTIONS)}

#: The web UI's start form, as a user thinks: target and key design, workload, load shape, then what applies only
#: sometimes (the ceiling search's steps with its shape; the emulator's budgets with --emulate-throttling), outputs last.
FORM_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("target and key design", ("partition_key", "key_strategy", "row_key_strategy", "skew", "key_seed", "seed_entities")),
    ("targets", ("profile", "partition_target", "account_target")),
    ("workload", ("mix", "batch_mix", "batch_size", "scan_size", "select", "entity_size", "properties", "retry")),
    ("the service's answers", ("timeout", "client")),
    ("load shape", ("rate", "arrival_rate", "arrivals", "max_in_flight")),
    ("ceiling search", tuple(opt.dest for opt in CEILING_OPTIONS)),
    ("throttling emulator", tuple("emulator_" + opt.dest for opt in EMULATOR_OPTIONS)),
    ("outputs and checks", ("fail_on", "out", "overwrite", "upload", "keep_table", "skip_verify")),
)
#: What the process started with and the form cannot change (the target, the table, the emulator): never a field,
#: except the emulator's budgets, shown while it runs; changing one there is refused.
FORM_FIXED = ("connection_string", "account_url", "table", "reuse_table", "run_id", "engine", "emulate_throttling")
FORM_FIXED += tuple("emulator_" + opt.dest for opt in EMULATOR_OPTIONS)
#: The form's help where an option's own is longer than a field's label shows whole (the full help: the options page).
FORM_HELP = {
    "key_strategy": "PartitionKey design: single, set:N, hash-prefix:N, guid, timestamp:FORMAT, template:TEXT…",
    "row_key_strategy": "RowKeys of new entities: sequential, guid, append-only, prepend-only, timestamp:FORMAT",
    "skew": "how accesses spread over the keys: uniform, zipfian[:theta], hotspot:80,20",
    "profile": "scalability targets: "
    + " or ".join(f"{name} ({t.partition}/{t.account} entities/s)" for name, t in PROFILES.items()),
    "mix": "operations and their weights, name=weight pairs: read=60,upsert=20,scan=5…",
    "batch_mix": "operations inside a batch, name=weight pairs: upsert=100",
    "retry": f"retry strategy: {RETRY_FORMS}",
    "timeout": "seconds an attempt waits for the service's answer",
    "client": "fast (the lean REST transport) or sdk (azure-data-tables, as an application sees it)",
    "rate": "operations/s per user, a fixed offered load (0 = closed loop)",
    "arrival_rate": "open loop: operations/s for the whole run, spread over the users (0 = off)",
    "max_in_flight": "open loop: operations in flight at once per Locust process",
    "max_p99": "a step is good while its corrected p99 stays at or under this many ms",
    "fail_on": "exit 3 when any of these findings occurs: never, or e.g. hot,throttled",
    "out": "folder for the report and results (default reports/<run-id>)",
    "upload": "blob container that receives the outputs (for loadtest merge --from-container)",
    "emulator_burst": "the emulator's seconds of budget each token bucket holds",
    "emulator_server_rate": "the emulator's partition servers' entities/s (0 = per-key and account budgets only)",
    "emulator_page_rows": "the emulator's rows a query's page holds at most (0 = as the table service pages)",
    "emulator_timeout_share": "the emulator's share of throttled answers given as 500 OperationTimedOut",
    "emulator_lb_delay": "the emulator's seconds a range stays over budget before it is split",
}

#: ``loadtest merge``'s own, then the stress test's it shares: where the engines' results are, and the outputs.
MERGE_OPTIONS: tuple[Option, ...] = (
    Option(
        ("sources",), "engines' folders (reports/<run-id>/<engine>) or results.json files", parse=texts, locust=False, many=True
    ),
    Option(
        ("--from-container",),
        "read every engine's results.json from CONTAINER/<run-id>/ in the target's storage account (what --upload wrote)",
        "",
        rules.container,
        locust=False,
    ),
    *(opt for opt in OPTIONS if opt.dest in ("run_id", "connection_string", "account_url", "timeout", "fail_on")),
    *(opt for opt in OPTIONS if opt.dest in ("out", "overwrite")),
)

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
    for opt in OPTIONS
    if opt.dest in ("run_id", "table", "connection_string", "account_url", "timeout")
)
