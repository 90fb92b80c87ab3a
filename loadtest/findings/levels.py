"""HOT, WARM and COOL: each partition's and the account's load against its target (an open loop's: its demand), with
the budget that throttled the run named where it is not the target."""

from __future__ import annotations

from ..bounds.throttlers import throttler
from ..buckets import GROUPS
from ..finding_names import K
from ..operations import OpClass
from ..phases import peak_words
from ..results import AccountRow, Finding, FindingKind, Results
from .common import ACCOUNT_REMEDIES, finding

__all__ = ["WARM_RATIO", "level", "levels"]

WARM_RATIO = 0.8
ORDER = {K.COOL: 0, K.WARM: 1, K.HOT: 2}


def level(ratio: float) -> FindingKind:
    """HOT above the target, WARM from 80 % of it, COOL below."""
    return K.HOT if ratio > 1.0 else K.WARM if ratio >= WARM_RATIO else K.COOL


def _load(row: AccountRow, window: int, open_loop: bool, what: str = "partition", steady: bool = True) -> str:
    """A row's load against its target: served; in an open loop the demand, which the finding judges, then served.
    ``steady``: the run had a steady phase (else its means cover the ramp, and say so)."""
    phase = "in the steady phase" if steady else "over the ramp (the run had no steady phase)"
    average = peak_words(window)
    served = f"peak {row.peak_eps:,.0f} entities/s ({average}), {row.ratio:.0%} of the {row.target:,}/s {what} target"
    if not open_loop:
        return f"{served}; mean {row.mean_eps:,.0f}/s {phase}"
    return (
        f"demand peak {row.offered_peak_eps:,.0f} entities/s ({average}), {row.offered_ratio:.0%} of the "
        f"{row.target:,}/s {what} target, mean {row.offered_mean_eps:,.0f}/s; served peak {row.peak_eps:,.0f}/s "
        f"({row.ratio:.0%}), mean {row.mean_eps:,.0f}/s {phase}"
    )


def _not_the_budget(results: Results, scope: str) -> str:
    """Where a budget other than the target throttled the run (the throttling emulator's, a simulation's), that the
    level (HOT, WARM, COOL) judges the target, not the budget: both figures named."""
    settings = results.run.settings
    if not (results.run.simulated or settings.get("emulate_throttling")):
        return ""
    rate = float(settings.get(f"emulator_{scope}_rate", 0) or 0)
    target = results.run.account_target if scope == "account" else results.run.partition_target
    if not rate or rate == target:
        return ""
    return f"; this level is against the {target:,}/s {scope} target, THROTTLED against {throttler(results.run, scope)}"


def levels(results: Results) -> list[Finding]:
    """Set each row's level (and the account's); the findings: each partition and op class above COOL, the hottest
    partition's even when COOL, and the account's when above COOL."""
    findings: list[Finding] = []
    worst: dict[str, int] = {}
    open_loop = results.open_loop
    for row in results.partitions:
        if row.partition in GROUPS:
            row.finding = ""  # many partitions together: the per-partition target does not apply
            continue
        row.finding = level(row.judged(open_loop)[1])
        if row.op_class != OpClass.ALL:
            worst[row.partition] = max(worst.get(row.partition, 0), ORDER[row.finding])
    window, steady = results.run.peak_window_s, results.run.steady_seconds > 0
    hottest = results.hottest()
    for row in results.partitions:
        if row.partition in GROUPS:
            continue
        if row.op_class == OpClass.ALL and ORDER[row.finding] <= worst.get(row.partition, 0):
            continue  # the total says nothing the op classes did not
        if row.finding == K.COOL and row.partition not in hottest:
            continue  # the hottest partition is COOL: so is every other, no need to list them
        what = "GET and PUT together" if row.op_class == OpClass.ALL else row.op_class
        load = _load(row, window, open_loop, steady=steady) + _not_the_budget(results, "partition")
        findings.append(finding(row.finding, f"{what} on partition {row.partition!r}: {load}", row))

    account = results.account
    account.finding = level(account.judged(open_loop)[1])
    if account.finding != K.COOL:
        said = f"account: {_load(account, window, open_loop, 'account', steady)}{_not_the_budget(results, 'account')}"
        findings.append(finding(account.finding, said, remedy=ACCOUNT_REMEDIES[account.finding]))
    return findings
