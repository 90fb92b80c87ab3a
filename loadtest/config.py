"""One typed settings object, from the command line, the environment or Locust's parsed options.

The tool's options are declared once, in ``OPTIONS``: ``loadtest run`` and Locust's own
parser (through ``init_command_line_parser``) both register them from this table, so the
web UI's start form, ``locust -f`` and ``loadtest run`` accept the same flags.
Every rule is checked here, at the edge, before anything is sent to the service.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from typing import Any

from locust.util.timespan import parse_timespan

from .entities import EntityShape, batch_bytes
from .errors import UsageError
from .keys import KeyStrategy, key_strategy, row_key_maker, validate_key
from .retry import RETRY_FORMS, RetryStrategy, parse_retry

__all__ = [
    "BATCH_OPERATIONS",
    "OPERATIONS",
    "OP_CLASS",
    "OPTIONS",
    "PROFILES",
    "FINDING_KINDS_FOR_FAIL_ON",
    "Settings",
    "add_options",
    "parse_duration",
    "parse_mix",
]

#: Every operation a user can weigh in ``--mix``, with the class the service's targets count it in.
OP_CLASS: dict[str, str] = {
    "read": "GET",  # point read (PartitionKey + RowKey)
    "scan": "GET",  # row range scan inside a partition
    "filter-scan": "GET",  # row range scan with a property filter: scans more than it returns
    "partition-scan": "GET",  # PartitionKey range scan
    "table-scan": "GET",  # full table scan (bounded by --scan-size)
    "insert": "PUT",
    "upsert": "PUT",  # upsert, merge mode
    "replace": "PUT",  # upsert, replace mode
    "update": "PUT",  # update (merge) of an existing entity, If-Match *
    "update-etag": "PUT",  # read, then update only if the ETag still matches (optimistic concurrency)
    "delete": "PUT",
    "batch": "PUT",  # entity group transaction of --batch-size operations (--batch-mix)
}
BATCH_OPERATIONS = ("insert", "upsert", "replace", "update", "delete")
OPERATIONS = tuple(OP_CLASS)

#: Scalability targets (entities/s) by profile: today's docs and the 2011-2014 docs.
PROFILES: dict[str, tuple[int, int]] = {"current": (2000, 20000), "legacy": (500, 5000)}

FINDING_KINDS_FOR_FAIL_ON = ("hot", "warm", "throttled", "errors", "emulator_bound")

DEFAULT_MIX = "read=60,upsert=25,insert=5,batch=5,scan=5"
DEFAULT_RETRY = "exponential:3,0.2,0.05,2"  # the docs' formula, with waits sized for a load test
CONNECTION_STRING_ENV = "AZURE_STORAGE_CONNECTION_STRING"
FROM_FLAG_ENV = "PARTITION_STRESS_CONNECTION_STRING_FROM_FLAG"  # loadtest run passes --connection-string this way


@dataclass(frozen=True)
class Option:
    """One command-line option, registered alike with argparse and with Locust's parser."""

    flags: tuple[str, ...]
    help: str
    default: Any = None
    type: Any = str
    action: str | None = None
    secret: bool = False
    env: str | None = None

    @property
    def dest(self) -> str:
        return self.flags[0].lstrip("-").replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option(("--partition-key",), "PartitionKey the load aims at (the single strategy's key)", "hot"),
    Option(
        ("--key-strategy",),
        "PartitionKey design: single, set:N, hash-prefix:N, guid, append-only, prepend-only, timestamp:FORMAT "
        "(e.g. yyyyMMddHHmm or ssyyyyMMddHHmm), template:TEXT (e.g. {event}__{distance})",
        "single",
    ),
    Option(("--row-key-strategy",), "RowKeys of new entities: sequential, guid, append-only, prepend-only, timestamp:FORMAT",
           "sequential"),  # fmt: skip
    Option(("--skew",), "access skew over the keys: uniform, zipfian[:theta], hotspot:OPS%,KEYS%", "uniform"),
    Option(("--key-seed",), "seed of the key strategy and skew: the same seed, the same keys and accesses", 1, int),
    Option(("--select",), "properties reads and scans return ($select), comma list; default all", ""),
    Option(("--batch-mix",), f"operations inside a batch, name=weight; names: {', '.join(BATCH_OPERATIONS)}", "upsert=100"),
    Option(
        ("--mix",),
        f"weighted operation mix, name=weight pairs; names: {', '.join(OPERATIONS)}",
        DEFAULT_MIX,
    ),
    Option(("--entity-size",), "bytes per entity, as the service sizes it (targets assume 1 KiB)", 1024, int),
    Option(("--properties",), "string properties the payload is spread over (0 = as few as fit)", 0, int),
    Option(("--seed-entities",), "entities seeded under the PartitionKey before the load", 1000, int),
    Option(("--batch-size",), "operations per entity group transaction (at most 100)", 100, int),
    Option(("--scan-size",), "rows a row range scan asks for", 100, int),
    Option(("--profile",), "scalability targets: current (2000/20000) or legacy (500/5000)", "current"),
    Option(("--partition-target",), "entities/s per partition (default: the profile's)", None, int),
    Option(("--account-target",), "entities/s per account (default: the profile's)", None, int),
    Option(
        ("--fail-on",),
        f"exit 3 when any of these findings occurs: never or a comma list of {', '.join(FINDING_KINDS_FOR_FAIL_ON)}",
        "never",
    ),
    Option(("--out",), "folder for report.html, results.json and timeseries.csv (default reports/<run-id>)", ""),
    Option(
        ("--connection-string",),
        f"storage connection string (or ${CONNECTION_STRING_ENV}); default: an embedded Azurite",
        "",
        secret=True,
        env=CONNECTION_STRING_ENV,
    ),
    Option(("--account-url",), "https://<account>.table.core.windows.net, signed in with DefaultAzureCredential", ""),
    Option(("--table",), "test table name (default: a new, unique one)", ""),
    Option(("--reuse-table",), "write to the existing --table (never deleted)", False, action="store_true"),
    Option(("--keep-table",), "keep the test table after the run", False, action="store_true"),
    Option(("--retry",), f"retry strategy: {RETRY_FORMS}; every attempt is counted", DEFAULT_RETRY),
    Option(("--emulate-throttling",), "put the throttling emulator (token buckets per PartitionKey and account) "
           "in front of the table service", False, action="store_true"),  # fmt: skip
    Option(("--emulator-partition-rate",), "the emulator's budget per PartitionKey, entities/s", 2000, int),
    Option(("--emulator-account-rate",), "the emulator's budget per account, entities/s", 20000, int),
    Option(("--emulator-timeout-share",), "share of throttled answers given as 500 OperationTimedOut (0-1)", "0"),
    Option(("--emulator-server-rate",), "model range partitions on partition servers of this many entities/s "
           "(0 = per-key and account budgets only)", 0, int),  # fmt: skip
    Option(("--emulator-lb-delay",), "seconds a range stays over budget before it is split and moved", "180"),
    Option(("--emulator-lb-offline",), "seconds a moved range is offline (503s)", "5"),
    Option(("--skip-verify",), "do not read the table back after the run to check every acknowledged write", False,
           action="store_true"),  # fmt: skip
    Option(("--rate",), "operations/s per user, a fixed offered load (0 = closed loop, as fast as answered)", "0"),
)


def add_options(parser: Any) -> None:
    """Register the tool's options with argparse or with Locust's parser."""
    locust_parser = hasattr(parser, "args_included_in_web_ui")
    # Locust's parser takes its web-UI keywords on add_argument itself, not on groups
    group = parser if locust_parser else parser.add_argument_group("partition-stress")
    for opt in OPTIONS:
        if any(flag in getattr(parser, "_option_string_actions", {}) for flag in opt.flags):
            continue  # Locust's own --profile has the same dest: its value is ours
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": opt.help, "default": opt.default}
        if opt.action:
            kwargs["action"] = opt.action
        else:
            kwargs["type"] = str  # validated by Settings, with the rule named
            kwargs["default"] = "" if opt.default is None else str(opt.default)
        if locust_parser:
            # secrets stay out of the web UI's form: its page would carry the value
            kwargs["include_in_web_ui"] = not opt.secret
        group.add_argument(*opt.flags, **kwargs)


def parse_duration(text: str) -> int:
    """Seconds from Locust's forms (90, 90s, 2m, 1h30m); positive only."""
    try:
        seconds = parse_timespan(str(text).strip())
    except ValueError:
        seconds = 0
    if seconds <= 0:
        raise UsageError(f"--duration {text!r}: must be a positive time span, e.g. 90, 90s, 2m, 1h30m")
    return seconds


def parse_mix(text: str, names: tuple[str, ...] = OPERATIONS, flag: str = "--mix") -> dict[str, int]:
    """``read=60,upsert=25`` -> weights; unknown names and all-zero mixes are refused."""
    mix: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, weight = part.partition("=")
        name = name.strip()
        if name not in names:
            raise UsageError(f"{flag}: unknown operation {name!r}; valid operations: {', '.join(names)}")
        if not sep or not re.fullmatch(r"\d+", weight.strip()):
            raise UsageError(f"{flag}: {part!r} needs a whole, non-negative weight, e.g. {name}=10")
        mix[name] = int(weight)
    if not any(mix.values()):
        example = DEFAULT_MIX if flag == "--mix" else "upsert=80,update=20"
        raise UsageError(f"{flag} {text!r}: at least one operation needs a weight above 0, e.g. {example}")
    return {name: weight for name, weight in mix.items() if weight}


def _int(name: str, value: Any, *, minimum: int, maximum: int | None = None, unit: str = "") -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise UsageError(f"--{name} {value!r}: must be a whole number") from None
    if number < minimum or (maximum is not None and number > maximum):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
        raise UsageError(f"--{name} {number}: must be {bound}{unit}")
    return number


def _seconds(name: str, value: Any) -> float:
    try:
        seconds = float(str(value).strip())
    except ValueError:
        seconds = -1.0
    if seconds < 0:
        raise UsageError(f"--{name} {value!r}: seconds, 0 or more (fractions allowed)")
    return seconds


@dataclass(frozen=True, kw_only=True)
class Settings:
    """What one stress test does, validated. ``connection_string`` never appears in ``public()``."""

    partition_key: str = "hot"
    key_strategy: str = "single"
    row_key_strategy: str = "sequential"
    skew: str = "uniform"
    key_seed: int = 1
    select: tuple[str, ...] = ()
    batch_mix: dict[str, int] = field(default_factory=lambda: {"upsert": 100})
    mix: dict[str, int] = field(default_factory=lambda: parse_mix(DEFAULT_MIX))
    shape: EntityShape = field(default_factory=EntityShape)
    seed_entities: int = 1000
    batch_size: int = 100
    scan_size: int = 100
    profile: str = "current"
    partition_target: int = 2000
    account_target: int = 20000
    fail_on: tuple[str, ...] = ()
    out: str = ""
    connection_string: str = field(default="", repr=False)
    account_url: str = ""
    table: str = ""
    reuse_table: bool = False
    keep_table: bool = False
    retry: RetryStrategy = field(default_factory=lambda: parse_retry(DEFAULT_RETRY))
    emulator: dict[str, float] = field(default_factory=dict)  # budgets when --emulate-throttling, else empty
    rate: float = 0.0
    verify: bool = True

    @classmethod
    def from_options(cls, options: Any) -> Settings:
        """Validate parsed options (argparse or Locust) into settings; raises ``UsageError``."""
        get = lambda name, default=None: getattr(options, name, default)  # noqa: E731
        partition_key = str(get("partition_key", "hot"))
        validate_key(partition_key, "PartitionKey")
        mix = parse_mix(str(get("mix", DEFAULT_MIX)))
        key_seed = _int("key-seed", get("key_seed", 1), minimum=0)
        strategy_spec = str(get("key_strategy", "single") or "single")
        skew = str(get("skew", "uniform") or "uniform")
        key_strategy(strategy_spec, default_key=partition_key, seed=key_seed, skew=skew)
        row_key_strategy = str(get("row_key_strategy", "sequential") or "sequential")
        row_key_maker(row_key_strategy, seed=key_seed)
        select = tuple(p.strip() for p in str(get("select", "") or "").split(",") if p.strip())
        batch_mix = parse_mix(str(get("batch_mix", "upsert=100") or "upsert=100"), BATCH_OPERATIONS, "--batch-mix")
        entity_size = _int(
            "entity-size", get("entity_size", 1024), minimum=1, maximum=EntityShape.MAX_BYTES, unit=" bytes (1 MiB)"
        )
        properties = _int("properties", get("properties", 0), minimum=0)
        shape = EntityShape.for_size(entity_size, partition_key=partition_key, properties=properties)
        seed = _int("seed-entities", get("seed_entities", 1000), minimum=1)
        batch_size = _int(
            "batch-size", get("batch_size", 100), minimum=1, maximum=100,
            unit=" (an entity group transaction holds at most 100 operations)",
        )  # fmt: skip
        if "batch" in mix and batch_bytes(shape, batch_size) > 4 * 1024 * 1024:
            raise UsageError(
                f"--batch-size {batch_size} x --entity-size {entity_size}: a batch of about "
                f"{batch_bytes(shape, batch_size) / 2**20:.1f} MiB exceeds the 4 MiB an entity group transaction holds;"
                " lower either"
            )
        scan_size = _int("scan-size", get("scan_size", 100), minimum=1)
        profile = str(get("profile", "current") or "current")
        if profile not in PROFILES:
            raise UsageError(f"--profile {profile!r}: valid profiles: {', '.join(PROFILES)}")
        partition_default, account_default = PROFILES[profile]
        partition_target = _int("partition-target", get("partition_target") or partition_default, minimum=1)
        account_target = _int("account-target", get("account_target") or account_default, minimum=1)
        fail_on = _parse_fail_on(str(get("fail_on", "never") or "never"))
        connection_string = str(get("connection_string", "") or os.environ.get(CONNECTION_STRING_ENV, ""))
        account_url = str(get("account_url", "") or "")
        if connection_string and account_url:
            raise UsageError("--connection-string and --account-url name two targets: give one")
        if account_url and not re.match(r"^https?://[^/\s]+", account_url):
            raise UsageError(f"--account-url {account_url!r}: must be a URL like https://<account>.table.core.windows.net")
        table = str(get("table", "") or "")
        if table and not re.fullmatch(r"[A-Za-z][A-Za-z0-9]{2,62}", table):
            raise UsageError(f"--table {table!r}: table names are 3-63 letters and digits, starting with a letter")
        reuse_table = bool(get("reuse_table", False))
        if reuse_table and not table:
            raise UsageError(
                "--reuse-table needs --table NAME: the tool never writes to a table it did not create unless you name it"
            )
        retry = parse_retry(str(get("retry", DEFAULT_RETRY) or DEFAULT_RETRY))
        emulator: dict[str, float] = {}
        if get("emulate_throttling", False):
            share = str(get("emulator_timeout_share", "0") or "0")
            try:
                timeout_share = float(share)
            except ValueError:
                timeout_share = -1.0
            if not 0 <= timeout_share <= 1:
                raise UsageError(f"--emulator-timeout-share {share!r}: a share from 0 to 1")
            emulator = {
                "partition_rate": _int("emulator-partition-rate", get("emulator_partition_rate", 2000), minimum=1),
                "account_rate": _int("emulator-account-rate", get("emulator_account_rate", 20000), minimum=1),
                "timeout_share": timeout_share,
                "server_rate": _int("emulator-server-rate", get("emulator_server_rate", 0), minimum=0),
                "lb_delay": _seconds("emulator-lb-delay", get("emulator_lb_delay", "180")),
                "lb_offline": _seconds("emulator-lb-offline", get("emulator_lb_offline", "5")),
            }
        try:
            rate = float(str(get("rate", 0) or 0))
        except ValueError:
            rate = -1.0
        if rate < 0:
            raise UsageError(f"--rate {get('rate')!r}: operations/s per user, 0 or more (0 = closed loop)")
        return cls(
            partition_key=partition_key,
            key_strategy=strategy_spec,
            row_key_strategy=row_key_strategy,
            skew=skew,
            key_seed=key_seed,
            select=select,
            batch_mix=batch_mix,
            mix=mix,
            shape=shape,
            seed_entities=seed,
            batch_size=batch_size,
            scan_size=scan_size,
            profile=profile,
            partition_target=partition_target,
            account_target=account_target,
            fail_on=fail_on,
            out=str(get("out", "") or ""),
            connection_string=connection_string,
            account_url=account_url,
            table=table,
            reuse_table=reuse_table,
            keep_table=bool(get("keep_table", False)),
            retry=retry,
            emulator=emulator,
            rate=rate,
            verify=not bool(get("skip_verify", False)),
        )

    def keys(self, stream: int = 0) -> KeyStrategy:
        """The key strategy; ``stream`` gives each user its own repeatable access sequence."""
        return key_strategy(self.key_strategy, default_key=self.partition_key, seed=self.key_seed, skew=self.skew,
                            stream=stream)  # fmt: skip

    def public(self) -> dict[str, Any]:
        """The settings as a report shows them: no secret, the target named only by its kind."""
        return {
            "partition_key": self.partition_key,
            "key_strategy": self.key_strategy,
            "row_key_strategy": self.row_key_strategy,
            "skew": self.skew,
            "key_seed": self.key_seed,
            "select": ",".join(self.select),
            "batch_mix": ",".join(f"{k}={v}" for k, v in self.batch_mix.items()),
            "mix": ",".join(f"{k}={v}" for k, v in self.mix.items()),
            "entity_size": self.shape.size,
            "properties": self.shape.properties,
            "seed_entities": self.seed_entities,
            "batch_size": self.batch_size,
            "scan_size": self.scan_size,
            "profile": self.profile,
            "partition_target": self.partition_target,
            "account_target": self.account_target,
            "fail_on": ",".join(self.fail_on) or "never",
            "account_url": self.account_url,
            "connection_string": "(set, redacted)" if self.connection_string else "",
            "table": self.table,
            "reuse_table": self.reuse_table,
            "keep_table": self.keep_table,
            "retry": self.retry.spec(),
            "emulate_throttling": bool(self.emulator),
            **{f"emulator_{k}": v for k, v in self.emulator.items()},
            "rate": self.rate,
            "skip_verify": not self.verify,
        }


def _parse_fail_on(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip().lower() for k in text.split(",") if k.strip())
    if kinds in ((), ("never",)):
        return ()
    for kind in kinds:
        if kind not in FINDING_KINDS_FOR_FAIL_ON:
            raise UsageError(f"--fail-on: unknown finding {kind!r}; valid: never, {', '.join(FINDING_KINDS_FOR_FAIL_ON)}")
    return kinds


def namespace(**overrides: Any) -> argparse.Namespace:
    """Defaults for every option, with overrides: what a User class falls back to outside a run."""
    values = {opt.dest: opt.default for opt in OPTIONS}
    values.update(overrides)
    return argparse.Namespace(**values)
