"""The stress test's options, declared once (flags, help, default, parser, the commands that take them).

``loadtest run``, ``ceiling`` and ``simulate`` and Locust's own parser (through ``init_command_line_parser``) all
register ``OPTIONS``, so the web UI's start form, ``locust -f`` and ``loadtest run`` accept the same flags (an option
``REAL_RUN`` marks is refused by a simulation, which sends nothing). ``loadtest emulator`` registers
``EMULATOR_OPTIONS``, which a run has as ``--emulator-*``. The commands' own options are in ``commands``;
``settings.Settings`` parses the stress test's, ``Option.value`` any one.
"""

from __future__ import annotations

from ..account.connection_string import CONNECTION_STRING_ENV
from ..account.endpoint import CONNECT_TIMEOUT_S, TIMEOUT_S
from ..limits import (
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MIX,
    MAX_DURATION_S,
    MAX_IN_FLIGHT,
    MAX_SCAN_ROWS,
    MAX_SEED_ENTITIES,
    MAX_SIMULATED_RATE,
    MAX_TIMEOUT_S,
    MAX_USER_ARRIVAL_RATE,
    MIN_RATE,
    MIN_RATE_SAID,
    MIN_STEP_S,
)
from ..results.finding_kinds import FAIL_ON
from ..service.entities import MAX_BATCH_OPERATIONS, MAX_ENTITY_BYTES
from ..service.operations import BATCH_OPERATIONS, MIX_OPERATIONS
from ..service.retry import DEFAULT_RETRY, RETRY_FORMS, RetryStrategy
from ..service.scale_targets import DEFAULT_PROFILE, PROFILES
from ..workload.arrivals import ARRIVALS
from . import rules
from .emulator import REQUEST_LOG, emulator_options
from .option import REAL_RUN, STRESS_TEST, Option, only
from .values import duration, mix, number, optional, positive, property_names, show_mix, switch, whole

__all__ = [
    "CEILING_OPTIONS",
    "OPTIONS",
    "OPTION_BY_DEST",
]


#: ``loadtest ceiling``'s options (and ``locust -f`` with its shape): the steps of offered load and the p99 rule.
CEILING_OPTIONS: tuple[Option, ...] = only(
    "ceiling",
    (
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
    ),
)


OPTIONS: tuple[Option, ...] = (
    Option(("--partition-key",), "PartitionKey the load aims at (the single strategy's key)", "hot", rules.key, blank=True),
    Option(
        ("--key-strategy",),
        "PartitionKey design: single, set:N, hash-prefix:N, guid, append-only, prepend-only, "
        "timestamp:FORMAT (e.g. yyyyMMddHHmm or ssyyyyMMddHHmm), template:TEXT (e.g. {event}__{distance}), "
        "sharded:N:KEYS:DESIGN (e.g. sharded:8:k0000000:set:20, the hot keys of a design written over N buckets)",
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
        f"entities seeded before the load, spread over the design's keys (at most {MAX_SEED_ENTITIES:,})",
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
        commands=STRESS_TEST | {"traffic"},
    ),
    Option(
        ("--partition-target",),
        "entities/s per partition (default: --emulator-partition-rate where given with --emulate-throttling, else the profile's)",
        None,
        optional(whole(minimum=1)),
        commands=STRESS_TEST | {"traffic"},
    ),
    Option(
        ("--account-target",),
        "entities/s per account (default: --emulator-account-rate where given with --emulate-throttling, else the profile's)",
        None,
        optional(whole(minimum=1)),
        commands=STRESS_TEST | {"traffic"},
    ),
    Option(
        ("--fail-on",),
        f"exit 3 when any of these findings occurs: never or a comma list of {', '.join(k.lower() for k in FAIL_ON)}",
        "never",
        rules.fail_on,
        lambda kinds: ",".join(k.lower() for k in kinds) or "never",
        commands=STRESS_TEST | {"merge", "traffic"},
    ),
    Option(
        ("--out",),
        "folder for report.html, results.json, series.parquet, buckets.parquet, timeseries.csv and server-logs.kql (default "
        "reports/<run-id>)",
        commands=STRESS_TEST | {"merge", "traffic"},
    ),
    Option(
        ("--overwrite",), "let --out replace an earlier run's files", False, switch, commands=STRESS_TEST | {"merge", "traffic"}
    ),
    Option(
        ("--no-report",),
        "write results.json, the series and --junit, not report.html (CI reads those; loadtest report PATH draws it "
        "later from the folder)",
        False,
        switch,
        commands=REAL_RUN | {"simulate", "merge", "traffic"},
    ),
    Option(
        ("--junit",),
        "also write the verdict as JUnit XML to this file, for CI: a test case per partition's level and per finding "
        "kind --fail-on takes, failed where --fail-on names it (compare: a test suite per run)",
        "",
        rules.file_to_create,
        commands=STRESS_TEST | {"merge", "traffic", "compare"},
    ),
    Option(
        ("--connection-string",),
        f"storage connection string (or ${CONNECTION_STRING_ENV}); default: an embedded Azurite",
        parse=rules.connection_string,
        secret=True,
        env=CONNECTION_STRING_ENV,
        commands=REAL_RUN | {"cleanup", "merge", "traffic"},
    ),
    Option(
        ("--account-url",),
        "https://<account>.table.core.windows.net, signed in with DefaultAzureCredential",
        "",
        rules.account_url,
        commands=REAL_RUN | {"cleanup", "merge", "traffic"},
    ),
    Option(("--table",), "test table name (default: a new, unique one)", "", rules.table, commands=REAL_RUN | {"cleanup"}),
    Option(("--reuse-table",), "write to the existing --table (never deleted)", False, switch, commands=REAL_RUN),
    Option(("--keep-table",), "keep the test table after the run", False, switch, commands=REAL_RUN),
    Option(
        ("--run-id",),
        "a run several engines share (Azure Load Testing's, other machines): results carry it, outputs go to "
        "reports/<run-id>/<engine>/, and the engines use one table (--table, default named from the id), created and "
        "seeded once, each writing under its own RowKey prefix; none deletes it",
        "",
        rules.run_id,
        commands=REAL_RUN | {"cleanup", "merge", "traffic"},
    ),
    Option(
        ("--engine",),
        "this engine's name within --run-id (default: the host name)",
        "",
        rules.engine,
        commands=REAL_RUN | {"traffic"},
    ),
    Option(
        ("--upload",),
        "blob container in the target's storage account that receives the outputs as CONTAINER/<run-id>/<engine>/, "
        "for `loadtest merge --from-container`",
        "",
        rules.container,
        commands=REAL_RUN | {"traffic"},
    ),
    Option(
        ("--client",),
        "the transport under each user's table session: fast (the lean REST transport, several times cheaper per operation) "
        "or sdk (azure-data-tables: the latencies an application sees through the SDK)",
        "fast",
        rules.client,
        commands=REAL_RUN,
    ),
    Option(
        ("--timeout",),
        f"seconds an attempt waits for the service's answer, for table set-up and load alike (connecting: at most "
        f"{CONNECT_TIMEOUT_S:g} s); a timed-out attempt is an error with code Timeout, retried as connection errors are",
        TIMEOUT_S,
        number(f"a positive number of seconds, at most {MAX_TIMEOUT_S}", lambda n: 0 < n <= MAX_TIMEOUT_S),
        commands=REAL_RUN | {"cleanup", "merge", "traffic"},
    ),
    Option(
        ("--retry",), f"retry strategy: {RETRY_FORMS}; every attempt is counted", DEFAULT_RETRY, rules.retry, RetryStrategy.spec
    ),
    Option(
        ("--emulate-throttling",),
        "put the throttling emulator (token buckets per PartitionKey and account) in front of the table service",
        False,
        switch,
        commands=REAL_RUN,
    ),
    *emulator_options(),
    REQUEST_LOG,
    Option(
        ("--skip-verify",),
        "do not read the table back after the run to check every acknowledged write",
        False,
        switch,
        commands=REAL_RUN,
    ),
    Option(
        ("--rate",),
        "operations/s per user, a fixed offered load (0 = closed loop, as fast as answered)",
        0.0,
        number(f"0 (a closed loop) or operations/s of at least {MIN_RATE_SAID}", lambda n: n == 0 or n >= MIN_RATE),
        commands=REAL_RUN,
    ),
    Option(
        ("--arrival-rate",),
        "open loop: operations/s for the whole run, spread over the users, each due at its time whatever the service's "
        f"pace; late ones are timed from when they were due, overdue ones dropped and counted (0 = off; at most "
        f"{MAX_USER_ARRIVAL_RATE:,} per user)",
        0.0,
        number(
            f"operations/s, 0 or more and at most {MAX_SIMULATED_RATE:,} (0: off; else at least {MIN_RATE_SAID})",
            lambda n: n == 0 or MIN_RATE <= n <= MAX_SIMULATED_RATE,
        ),
    ),
    Option(("--arrivals",), f"how --arrival-rate's operations arrive: {', '.join(ARRIVALS)}", "constant", rules.arrivals),
    Option(
        ("--max-in-flight",),
        "open loop: operations in flight at once per Locust process (each due operation runs on its own, retries and "
        "backoffs included, so a user never waits for an answer to keep its schedule); when all are busy, slots wait "
        "and may drop, and the run names the concurrency its schedule needed",
        DEFAULT_MAX_IN_FLIGHT,
        whole(minimum=1, maximum=MAX_IN_FLIGHT, unit=" (each holds a connection and a greenlet: add workers beyond)"),
        commands=REAL_RUN,
    ),
)

#: Every stress-test option (and the ceiling search's) by its dest: what a class attribute or a form field names.
OPTION_BY_DEST: dict[str, Option] = {opt.dest: opt for opt in (*OPTIONS, *CEILING_OPTIONS)}
