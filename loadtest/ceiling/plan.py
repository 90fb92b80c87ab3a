"""The ceiling search's plan: steps of offered load, each a whole number of users at one rate, and each step as it
ran (its window of seconds).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import asdict, dataclass
from typing import Any

from ..exit_codes import UsageError
from ..limits import MAX_DURATION_S
from ..options.stress import CEILING_OPTIONS

__all__ = ["MAX_STEPS", "MAX_USER_RATE", "SETTLE_S", "Plan", "StepWindow"]

MAX_USER_RATE = 10  # operations/s one user offers: due 100 ms apart, so a user keeps pace until latency nears that
MAX_STEPS = 1000
SETTLE_S = 1.0  # a step's first second is left out of its figures: users starting, schedules finding their phase


@dataclass(frozen=True, kw_only=True)
class Plan:
    """Offered operations/s from ``start`` up by ``step`` to at most ``maximum``, each step ``step_s`` seconds."""

    start: int
    step: int
    maximum: int
    step_s: int
    max_p99_ms: float

    @classmethod
    def from_options(cls, options: argparse.Namespace) -> Plan:
        v = {opt.dest: opt.value(options) for opt in CEILING_OPTIONS}
        plan = cls(
            start=v["ceiling_start"],
            step=v["ceiling_step"],
            maximum=v["ceiling_max"],
            step_s=v["step_time"],
            max_p99_ms=v["max_p99"],
        )
        if plan.start > plan.maximum:
            raise UsageError(f"--ceiling-start {plan.start} is above --ceiling-max {plan.maximum}: the first step must fit")
        if plan.steps > MAX_STEPS:
            raise UsageError(
                f"--ceiling-start {plan.start} to --ceiling-max {plan.maximum} by --ceiling-step {plan.step} makes "
                f"{plan.steps:,} steps; at most {MAX_STEPS:,}: take larger steps"
            )
        if plan.steps * plan.step_s > MAX_DURATION_S:  # a search is a run: no longer than the longest
            raise UsageError(
                f"--step-time {plan.step_s:,} s x {plan.steps:,} steps (--ceiling-start {plan.start} to --ceiling-max "
                f"{plan.maximum} by --ceiling-step {plan.step}) runs {plan.steps * plan.step_s / 3600:,.0f}h; a search "
                f"runs at most {MAX_DURATION_S // 3600}h: take shorter or fewer steps"
            )
        return plan

    @property
    def user_rate(self) -> int:
        """Operations/s each user offers: the largest whole rate up to ``MAX_USER_RATE`` that every step's offered
        load is a multiple of, so that a step's users offer exactly its load."""
        common = math.gcd(self.start, self.step)
        return max(d for d in range(1, MAX_USER_RATE + 1) if common % d == 0)

    @property
    def steps(self) -> int:
        return (self.maximum - self.start) // self.step + 1

    def offered(self, index: int) -> int:
        return self.start + index * self.step

    def users(self, index: int) -> int:
        return self.offered(index) // self.user_rate

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "user_rate": self.user_rate, "steps": self.steps}


@dataclass(kw_only=True)
class StepWindow:
    """One step as it ran: its load, and when (epoch seconds) its users were set and the next step's were."""

    index: int
    offered: int
    users: int
    spawn_rate: float
    began: float
    ended: float | None = None

    def seconds(self) -> list[int]:
        """The whole seconds measured: after the settling second, before the step ended."""
        if self.ended is None:
            return []
        return list(range(math.ceil(self.began + SETTLE_S), math.floor(self.ended)))
