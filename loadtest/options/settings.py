"""One typed settings object, from the command line, ``locust.conf``, the environment or Locust's
parsed options: every option of ``stress.OPTIONS`` parsed, then the rules that span several
options checked, at the edge, before anything is sent to the service.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, fields
from typing import Any, NoReturn
from urllib.parse import urlsplit

from ..account.connection_string import CONNECTION_STRING_ENV
from ..emulator.budgets import Budgets
from ..exit_codes import UsageError
from ..limits import MAX_USER_ARRIVAL_RATE
from ..redact import public_url, redact
from ..results.finding_names import FindingKind
from ..results.schema import USER_SETTINGS
from ..service.entities import MAX_BATCH_BYTES, EntityShape, batch_bytes
from ..service.retry import RetryStrategy
from ..service.scale_targets import NONE_GIVEN, Targets, judged_against
from ..testbed.integrity import user_row_prefix
from ..workload.key_specs import key_strategy, row_key_maker
from ..workload.keys import KeyStrategy
from .rules import host_engine
from .stress import OPTIONS

__all__ = ["USER_SETTINGS", "Settings", "namespace"]


@dataclass(frozen=True, kw_only=True)
class Settings:
    """What one stress test does, validated. Fields are named as the options' ``dest``;
    ``connection_string`` never appears in ``public()`` or ``repr``.
    """

    partition_key: str
    key_strategy: str
    row_key_strategy: str
    skew: str
    key_seed: int
    select: tuple[str, ...]
    batch_mix: dict[str, int]
    mix: dict[str, int]
    entity_size: int
    properties: int
    seed_entities: int
    batch_size: int
    scan_size: int
    profile: str
    partition_target: int
    account_target: int
    fail_on: tuple[FindingKind, ...]
    out: str
    overwrite: bool
    no_report: bool
    junit: str
    connection_string: str
    account_url: str
    table: str
    reuse_table: bool
    keep_table: bool
    run_id: str
    engine: str
    upload: str
    client: str
    timeout: float
    retry: RetryStrategy
    request_log: str
    emulate_throttling: bool
    emulator_partition_rate: float
    emulator_account_rate: float
    emulator_burst: float
    emulator_timeout_share: float
    emulator_server_rate: float
    emulator_lb_delay: float
    emulator_lb_offline: float
    emulator_page_rows: int
    emulator_per_key_only: bool
    skip_verify: bool
    rate: float
    arrival_rate: float
    arrivals: str
    max_in_flight: int
    shape: EntityShape  # built from entity_size, properties and partition_key

    def __repr__(self) -> str:
        return f"Settings({self.public()})"

    @classmethod
    def from_options(cls, options: argparse.Namespace, *, users: int = 0, offline: bool = False) -> Settings:
        """Validate parsed options (argparse, Locust, or ``namespace``) into settings; raises ``UsageError``. Every
        rule that spans options is checked here, the one entry of ``loadtest run``, ``locust -f`` and the web form:
        ``users``, when known (0: not yet), are held against the open loop's rate. ``offline``: nothing will be sent
        (a simulation), so no secret is read, from the options or the environment, nor a real run's option from the
        environment."""
        # offline: the real-run options' variables (LOCUST_TIMEOUT=0, set for the runs beside it) are not its own
        own = lambda opt: not (offline and "simulate" not in opt.commands)  # noqa: E731
        v = {opt.dest: "" if offline and opt.secret else opt.value(options, environment=own(opt)) for opt in OPTIONS}
        # the key strategy (every key it makes) with the seed it is used with, and the RowKeys
        key_strategy(v["key_strategy"], default_key=v["partition_key"], seed=v["key_seed"], skew=v["skew"])
        row_key_maker(v["row_key_strategy"], prefix=user_row_prefix(99), seed=v["key_seed"])  # as long as users' RowKeys
        shape = EntityShape.for_size(v["entity_size"], partition_key=v["partition_key"], properties=v["properties"])
        v["properties"] = shape.properties
        if "batch" in v["mix"] and batch_bytes(shape, v["batch_size"]) > MAX_BATCH_BYTES:
            raise UsageError(
                f"--batch-size {v['batch_size']} x --entity-size {v['entity_size']}: a batch of about "
                f"{batch_bytes(shape, v['batch_size']) / 2**20:.1f} MiB exceeds the 4 MiB an entity group transaction "
                "holds; lower either"
            )
        v["partition_target"], v["account_target"] = judged_against(
            v["profile"], v["partition_target"], v["account_target"], emulated=_emulated_budgets(v)
        )
        if v["connection_string"] and v["account_url"]:
            raise UsageError("--connection-string and --account-url name two targets: give one")
        if urlsplit(v["account_url"]).query:
            _refuse_sas_in_account_url(v["account_url"])
        if v["rate"] and v["arrival_rate"]:
            raise UsageError(
                "--rate (per user, closed loop) and --arrival-rate (the whole run, open loop) both set the offered load: give one"
            )
        v["engine"] = v["engine"] or host_engine()
        if v["upload"] and not offline:  # where the outputs go, known before anything is sent
            from ..account.endpoint import blob_url

            blob_url(connection_string=v["connection_string"], account_url=v["account_url"], flag=f"--upload {v['upload']}")
        if v["reuse_table"] and not v["table"]:
            raise UsageError(
                "--reuse-table needs --table NAME: the tool never writes to a table it did not create unless you name it"
            )
        if v["request_log"]:
            _check_request_log(v["request_log"], v["emulate_throttling"])
        _check_open_loop(v["arrival_rate"], users)
        return cls(**v, shape=shape)

    def for_class(self, user_class: type) -> Settings:
        """These settings with a user class's own (its ``USER_SETTINGS`` attributes that are not ``None``)."""
        overrides = {name: getattr(user_class, name) for name in USER_SETTINGS if getattr(user_class, name, None) is not None}
        if not overrides:
            return self
        values = {k: v for k, v in self.public().items() if k not in ("connection_string", "account_url")}
        secret = {"connection_string": self.connection_string, "account_url": self.account_url}
        return Settings.from_options(namespace(**{**values, **overrides, **secret}))

    @property
    def seeding(self) -> tuple[Any, ...]:
        """What the seeded rows depend on: two settings with the same ``seeding`` address the same rows."""
        return (self.key_strategy, self.partition_key, self.key_seed, self.seed_entities, self.shape)

    @property
    def emulator(self) -> Budgets | None:
        """The throttling emulator's budgets with ``--emulate-throttling``, else ``None``."""
        if not self.emulate_throttling:
            return None
        return Budgets(**{f.name: getattr(self, f"emulator_{f.name}") for f in fields(Budgets)})

    @property
    def verify(self) -> bool:
        return not self.skip_verify

    def keys(self, stream: int | str = 0, rows: str = "") -> KeyStrategy:
        """The key strategy; ``stream`` gives each user its own repeatable access sequence; ``rows`` prefixes the
        seeded RowKeys (a run's own, in a reused table)."""
        return key_strategy(
            self.key_strategy, default_key=self.partition_key, seed=self.key_seed, skew=self.skew, stream=stream, rows=rows
        )

    def public(self) -> dict[str, Any]:
        """The settings as a report shows them (and ``namespace`` parses back): no secret, no unused emulator option."""
        shown = {}
        for opt in OPTIONS:
            if opt.dest.startswith("emulator_") and not self.emulate_throttling:
                continue
            value = getattr(self, opt.dest)
            shown[opt.dest] = ("(set, redacted)" if value else "") if opt.secret else opt.show(value)
            if isinstance(shown[opt.dest], str):
                shown[opt.dest] = redact(shown[opt.dest])  # e.g. an --account-url carrying a SAS
        return shown


def namespace(**overrides: Any) -> argparse.Namespace:
    """Defaults for every option, with overrides: what a User class falls back to outside a run."""
    values = {opt.dest: opt.default for opt in OPTIONS}
    values.update(overrides)
    return argparse.Namespace(**values)


def _refuse_sas_in_account_url(url: str) -> NoReturn:
    """A query in ``--account-url`` (a SAS) is never a credential: the tool signs in there with Azure AD, the master and
    each worker with its own, and no secret travels to workers (Locust's messages are plain and open to any worker).
    A SAS goes in a connection string, which each worker reads from its own environment (``--workers`` inherit it)."""
    raise UsageError(
        f"--account-url {public_url(url) + '?…'!r}: a query (a SAS) is not used, as --account-url signs in with Azure AD "
        f"(DefaultAzureCredential) on the master and on each worker; give the URL without its query, or the SAS as a "
        f"connection string in ${CONNECTION_STRING_ENV} (TableEndpoint={public_url(url).rstrip('/')};"
        "SharedAccessSignature=<sas>), which each worker reads from its own environment"
    )


def _emulated_budgets(v: dict[str, Any]) -> Targets:
    """The throttling emulator's budgets that were given (0: its default, or no emulator): the targets a run is judged
    by where none was given, so a run through an emulator scaled down to 100 entities/s a partition is judged at 100."""
    if not v.get("emulate_throttling"):
        return NONE_GIVEN
    given = lambda rate, default: max(1, round(rate)) if rate and rate != default else 0  # noqa: E731
    return Targets(
        given(v.get("emulator_partition_rate"), Budgets.partition_rate),
        given(v.get("emulator_account_rate"), Budgets.account_rate),
    )


def _check_request_log(path: str, emulate_throttling: bool) -> None:
    """--request-log is the emulator's record (where a file can be written: its rule, ``rules.file_to_write``)."""
    if not emulate_throttling:
        raise UsageError(f"--request-log {path!r}: the throttling emulator writes it; give --emulate-throttling too")


def _check_open_loop(arrival_rate: float, users: int) -> None:
    """``--arrival-rate`` over the run's users: each starts one operation at a time, at most ``MAX_USER_ARRIVAL_RATE``
    a second; a schedule past that only drops slots. ``UsageError`` naming the rule and the users it needs."""
    if arrival_rate and users and arrival_rate > users * MAX_USER_ARRIVAL_RATE:
        need = math.ceil(arrival_rate / MAX_USER_ARRIVAL_RATE)
        raise UsageError(
            f"--arrival-rate {arrival_rate:g} over {users:,} users is {arrival_rate / users:,.0f} operations/s each; a user "
            f"starts at most {MAX_USER_ARRIVAL_RATE:,} a second (its schedule's slots, one after the other): give at least "
            f"{need:,} users (-u), or a lower rate"
        )
