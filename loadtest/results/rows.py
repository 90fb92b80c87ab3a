"""The rows of a run's result: what ran (``RunInfo``), entities against a target (the account's row and each
partition's per op class), and a finding. ``form.Results`` holds them; every output reads them from there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..counting.phases import PEAK_WINDOW_S
from ..service.operations import OpClass
from .finding_names import FindingKind
from .schema import RunSettings, UserClass

__all__ = ["AccountRow", "Finding", "PartitionRow", "RecordedSettings", "RunInfo"]


@dataclass(frozen=True, kw_only=True)
class RecordedSettings:
    """The recorded settings that readers judge a run by, typed once (``RunInfo.recorded``). ``RunInfo.settings`` holds
    every option as the report shows it; an older file, a simulation or a traffic read may lack any, which then reads
    as its default here. Its numbers are checked on read (``schema.RunSettings`` declares them); text and switches
    read whatever was recorded."""

    arrival_rate: float = 0.0  # --arrival-rate: an open loop's operations/s (0: a closed loop)
    arrivals: str = ""  # --arrivals: how the open loop's slots are spaced
    retry: str = ""  # --retry
    fail_on: str = "never"  # --fail-on, as shown
    out: str = ""  # --out
    profile_out: str = ""  # loadtest traffic's --profile-out
    emulate_throttling: bool = False
    emulator_partition_rate: float = 0.0  # the throttling emulator's budgets (recorded only when it ran)
    emulator_account_rate: float = 0.0
    emulator_server_rate: float = 0.0
    emulator_per_key_only: bool = False

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> RecordedSettings:
        """Each field recorded, as its default's type reads it (a number shown as text, "" or None as 0)."""
        typed = {float: lambda value: float(value or 0), bool: bool, str: str}
        return cls(**{f.name: typed[type(f.default)](settings[f.name]) for f in fields(cls) if f.name in settings})


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    id: str
    started: str
    duration_s: float
    target_kind: str
    table: str
    seeded: int
    partition_target: int
    account_target: int
    profile: str
    endpoint: str = ""
    emulator: bool = False
    simulated: bool = False  # ``loadtest simulate``: the partition layer's model in virtual time, nothing sent
    steady_from_s: float = 0.0
    steady_seconds: int = 0
    peak_window_s: int = PEAK_WINDOW_S
    users: int = 0
    entity_bytes: int = 0  # a seeded entity's size as the service counts it (keys, properties, names)
    settings: RunSettings = field(default_factory=dict)
    interrupted: str = ""  # the signal that cut the run short (SIGINT, SIGTERM), "" if it ran its course
    planned_s: float = 0.0  # the duration it was given (-t), 0 if none
    user_classes: list[UserClass] = field(default_factory=list)  # each Locust user class that ran, with its design

    @property
    def recorded(self) -> RecordedSettings:
        """The settings readers judge the run by, typed."""
        return RecordedSettings.of(self.settings)


@dataclass(kw_only=True)
class AccountRow:
    """Entities served against a target: the account's row, and the base of each partition's."""

    entities: int
    mean_eps: float
    peak_eps: float
    target: int
    ratio: float
    finding: str = ""
    # the demand: entities asked for, sent or not (an open loop's schedule; closed loop: what was sent), same windows
    offered_mean_eps: float = 0.0
    offered_peak_eps: float = 0.0
    offered_ratio: float = 0.0

    def judged(self, open_loop: bool) -> tuple[float, float]:
        """(peak, ratio) the finding judges: the demand's in an open loop (the design's question), else what was served
        (also for a results.json written before demand was counted)."""
        return (self.offered_peak_eps, self.offered_ratio) if open_loop and self.offered_peak_eps else (self.peak_eps, self.ratio)


@dataclass(kw_only=True)
class PartitionRow(AccountRow):
    partition: str
    op_class: OpClass  # GET | PUT | ALL (both, the figure the partition's target applies to)
    requests: int
    offered: int = 0
    estimated: int = 0  # entities counted from what the run knows of the partition (filtered scans)
    failures: int = 0
    attempts: int = 0
    throttled: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # failed operations by the service's error code
    throttled_by: dict[str, int] = field(default_factory=dict)  # throttled attempts by reason: partition, account, timeout
    #: seconds from its first to its last with load, where fewer than the run's peak window and busy (10 entities a
    #: second or more): its peak is over them (a key alive for a second is measured over its own life, not diluted by
    #: the seconds it did not exist); 0: the run's window
    life_s: int = 0
    #: some of its seconds were folded into the other partitions (it was not among the hottest keys then): its rates
    #: (peak, means) are at least what they say; its totals include those seconds (``whole_totals``)
    partial: bool = False


@dataclass(kw_only=True)
class Finding:
    """One finding: on a partition (``op_class`` None: the partition as a whole, GET and PUT its parts), the account or
    the run (``partition`` None); ``cause``: what it measured as its reason and ``act``: what its remedy asks
    (``finding_names.Cause``, ``Act``; "" in results written before they were kept)."""

    kind: FindingKind
    partition: str | None
    op_class: OpClass | None
    message: str
    remedy: str
    cause: str = ""
    act: str = ""
    #: the share of the requests counted (attempts, where retries are counted) that the finding is about, where it
    #: counts them (ERRORS, THROTTLED); None where it is about a load, not a count of requests. The one order ranks a
    #: finding about a sliver of them below the rest (``order.SLIGHT``)
    share: float | None = None
