"""The form of results.json's ``advice`` section (``loadtest advise``), declared once as ``ceiling_schema`` declares a
ceiling search's: ``typed.reader`` checks it on read, the results reference shows it."""

# No ``from __future__ import annotations``: the TypedDicts' annotations are the types themselves, read at run time.

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from ..typed.reader import Check

__all__ = ["Advice"]

#: An object left empty: what a part that is not there is written as (a design that does not fit has no cost).
Empty = Annotated[dict[str, Any], Check(lambda value: not value, "an empty object")]


class Shares(TypedDict):
    """A design's peak window in the partition layer's model: the share of demand served, of attempts throttled."""

    served_share: float
    throttled_share: float


class OpCost(TypedDict):
    """What a design changes of one operation of the workload."""

    op: str
    per_s: float
    change: str


class Cost(TypedDict):
    """What a design costs the workload's operations."""

    extra_requests_per_s: float
    extra_entities_per_s: float
    batches_split_per_s: float
    atomicity: str
    read_path: str
    ops: list[OpCost]


class DesignLoad(TypedDict):
    """A design's hottest partition and the account, against their targets."""

    label: str
    hottest: str
    hottest_eps: float
    ratio: float
    account_ratio: float


class Current(DesignLoad):
    """The design as it is: its load, and its peak window simulated."""

    simulated: Shares


class Answer(TypedDict):
    """A family's answer: whether it applies and fits (and why not), the ratio at each N probed."""

    family: str
    applies: bool
    why_not: str
    curve: list[tuple[int, float]]  # (N, the hottest partition's entities/s)
    simulated: Shares | Empty


class Fits(Answer, DesignLoad):
    """A family that fits: its design's load and cost."""

    fits: Literal[True]
    cost: Cost


class FitsNot(Answer):
    """A family that does not fit (or does not apply): why not."""

    fits: Literal[False]
    cost: Cost | Empty


class Measured(TypedDict):
    """A partition in a verifying run, or in its simulation."""

    ratio: float
    served_share: float
    served_share_se: NotRequired[float]  # the served share's standard error, from the window's seconds
    served_eps: float
    throttled_share: float
    attempts: int


class Compared(TypedDict):
    """One partition of a verified design: the real run beside its simulation."""

    partition: str
    real: Measured
    simulated: Measured
    compared: bool
    agrees: bool
    served_within: NotRequired[float]  # relative: SERVED_WITHIN, or three standard errors where wider
    throttled_within: float


class Verified(TypedDict):
    """A design verified: its partitions, the real run beside its simulation."""

    family: str
    label: str
    partitions: list[Compared]


class NotVerified(TypedDict):
    """A design that could not be verified, and why."""

    family: str
    label: str
    why_not: str


class Verification(TypedDict):
    """``--verify``: the scale each design ran at for real, and each design's partitions beside their simulation."""

    factor: float
    operations_per_s: float
    partition_target: int
    account_target: int
    seconds: float
    retry: str
    served_within: float
    settle_s: float
    throttled_within: float
    designs: list[Verified | NotVerified]


class Advice(TypedDict):
    """``loadtest advise``: the workload and the peak x growth it was judged at, the current design, each family's
    smallest fitting design (or why none), its costs and simulated peak window, the choice, its code, the proof."""

    source: str
    workload: list[str]  # the workload's options
    peak_operations_per_s: float
    growth: float
    judged_at_operations_per_s: float
    headroom: float
    partition_target: Annotated[int, Check(lambda n: n > 0, "a positive number of entities/s")]  # the chart's scale
    account_target: int
    account_over: bool
    current: Current
    why: str
    designs: list[Fits | FitsNot]  # per family
    chosen: str  # a family, "current", or "" (none fits)
    runner_up: str
    recommendation: str
    chosen_cost: Cost | Empty
    code: dict[str, str]  # python, csharp
    search_s: float
    leaves_out: str
    verification: Verification | Empty  # --verify: the scale, per design per partition real beside simulated
