"""What judged a throttled attempt, in words: the throttling emulator's or a simulation's budget, or Azure's target.
The findings and the ceiling's judgement name it beside the throttled attempts.
"""

from __future__ import annotations

from ..results import RunInfo

__all__ = ["throttler"]


def throttler(run: RunInfo, reason: str = "partition") -> str:
    """What judged a throttled attempt for ``reason`` (a partition's or the account's rate), with its figure: the
    budget given to the throttling emulator or to a simulation's model, else the service's own target."""
    settings = run.settings
    account = reason == "account"
    if run.simulated or settings.get("emulate_throttling"):
        rate = float(settings.get("emulator_account_rate" if account else "emulator_partition_rate", 0) or 0)
        who = "the simulation's" if run.simulated else "the throttling emulator's"
        return f"{who} {rate:,.0f} entities/s {'account' if account else 'per-partition'} budget"
    if run.emulator:
        return "the emulator's budget (not given to this run)"
    target = run.account_target if account else run.partition_target
    return f"Azure's {target:,}/s {'account' if account else 'partition'} target"
