"""The form of a ceiling search in results.json (``loadtest ceiling``): its plan, each step judged, the ceiling and
what limited it. It stands with the results' form, below the ``ceiling`` wing that fills it and the pages that read it.
"""

# No ``from __future__ import annotations``: the TypedDicts' annotations are the types themselves, read at run time.

from typing import Literal, NotRequired, TypedDict

__all__ = ["Ceiling", "Limit"]


class CeilingPlan(TypedDict):
    start: int
    step: int
    maximum: int
    step_s: float
    max_p99_ms: float
    user_rate: int
    steps: int


class StepPartition(TypedDict):
    """A partition's entities/s in a step (and per op class, as further keys)."""

    partition: str
    entities_per_s: float


class CeilingStep(TypedDict):
    step: int
    offered_per_s: int
    users: int
    from_s: float
    to_s: float
    seconds: int
    sent_per_s: float
    served_per_s: float
    served_share: float
    entities_per_s: float
    throttled_share: float
    throttled_by: NotRequired[dict[str, int]]  # throttled attempts by reason: partition, account, timeout
    error_share: float
    errors: dict[str, int]
    dropped: int
    p99_ms: float
    corrected_p99_ms: float
    generator_cpu: float
    servers_cpu: NotRequired[dict[str, float]]  # the run's local servers, % of one core (read since 2026-11-24)
    machine_cpu: NotRequired[float | None]  # the machine's cores, % of all
    capped: NotRequired[int]  # slots that waited for a lane
    partitions: list[StepPartition]
    good: bool
    broken: list[str]


class CeilingOutcome(TypedDict):
    """The last good step."""

    step: int
    offered_per_s: int
    served_per_s: float
    entities_per_s: float
    partitions: list[StepPartition]


#: What can limit a ceiling search ("": no step gave way); ``ceiling.remedies.LIMITS`` gives each its remedy.
Limit = Literal["throttling", "errors", "generator", "emulator", "machine", "concurrency", "latency", ""]


class Ceiling(TypedDict):
    """A ceiling search: its plan, each step judged, the ceiling and what limited it."""

    plan: CeilingPlan
    steps: list[CeilingStep]
    ceiling: CeilingOutcome | None  # none: the first step gave way
    found: bool
    limited_by: Limit
    reason: str
