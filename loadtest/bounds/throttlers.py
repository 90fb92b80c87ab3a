"""What judged a throttled attempt, in words: the throttling emulator's or a simulation's budget, or Azure's target.
The findings and the ceiling's judgement name it beside the throttled attempts.
"""

from __future__ import annotations

from ..results.form import RunInfo

__all__ = ["budget", "judged_by", "throttler"]


def budget(run: RunInfo, reason: str = "partition") -> float:
    """The budget the throttling emulator or a simulation's model was given for ``reason`` (a partition's or the
    account's rate), 0 where the run had none (Azure, or Azurite alone)."""
    recorded = run.recorded
    if not (run.simulated or recorded.emulate_throttling):
        return 0.0
    return recorded.emulator_account_rate if reason == "account" else recorded.emulator_partition_rate


def judged_by(run: RunInfo, reason: str = "partition") -> float:
    """The rate that judged a throttled attempt for ``reason``: the run's budget, else the service's target."""
    return budget(run, reason) or float(run.account_target if reason == "account" else run.partition_target)


def throttler(run: RunInfo, reason: str = "partition") -> str:
    """What judged a throttled attempt for ``reason`` (a partition's or the account's rate), with its figure: the
    budget given to the throttling emulator or to a simulation's model, else the service's own target."""
    account = reason == "account"
    if run.simulated or run.recorded.emulate_throttling:
        rate = budget(run, reason)
        who = "the simulation's" if run.simulated else "the throttling emulator's"
        return f"{who} {rate:,.0f} entities/s {'account' if account else 'per-partition'} budget"
    if run.emulator:
        return "the emulator's budget (not given to this run)"
    target = run.account_target if account else run.partition_target
    return f"Azure's {target:,}/s {'account' if account else 'partition'} target"
