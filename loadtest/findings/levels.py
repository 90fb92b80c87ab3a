"""HOT, WARM and COOL: each partition judged once, on its total (GET and PUT together, scanned entities included, as
the service counts them) against the per-partition target — in an open loop its demand, else what it served — with
GET and PUT as its parts; the account judged the same way against its target. A remedy over a target is sized: how
many PartitionKeys (or storage accounts) put the load under it, and under 80 % of it."""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..bounds.throttlers import budget, throttler
from ..counting.buckets import GROUPS, named
from ..counting.phases import peak_words
from ..results.finding_kinds import ACCOUNT_TARGETS, SPREAD_ACCOUNTS
from ..results.finding_names import Act, K
from ..results.form import AccountRow, Finding, FindingKind, PartitionRow, Results
from ..service.operations import OpClass
from . import checklist
from .common import finding
from .remedies import HEADROOM, accounts_needed, keys_needed, spread_words

__all__ = ["WARM_RATIO", "design_of", "level", "levels"]

WARM_RATIO = 0.8


def level(ratio: float) -> FindingKind:
    """HOT above the target, WARM from 80 % of it, COOL below."""
    return K.HOT if ratio > 1.0 else K.WARM if ratio >= WARM_RATIO else K.COOL


def design_of(results: Results) -> Mapping[str, Any]:
    """The key design that ran, as a sized remedy reads it: the one table user class's, else the run's settings."""
    classes = [c for c in results.run.user_classes if c.get("table_user")]
    design = classes[0]["design"] if len(classes) == 1 else results.run.settings
    increasing = bool(checklist.ordered_ends(results))
    return {**design, "increasing": increasing}


def _parts(rows: list[PartitionRow], open_loop: bool) -> str:
    """A partition's op classes as its parts: each one's peak (at its own busiest seconds) and share of the entities."""
    single = [r for r in rows if r.op_class != OpClass.ALL]
    if len(single) < 2:
        return f"all {single[0].op_class}" if single else ""
    means = [r.offered_mean_eps if open_loop and r.offered_peak_eps else r.mean_eps for r in single]
    total = sum(means) or 1.0
    peaks = " and ".join(f"{r.op_class} {r.judged(open_loop)[0]:,.0f}/s" for r in single)
    shares = " and ".join(f"{m / total:.0%}" for m in means)
    return f"GET and PUT together; {peaks} at their own peaks, {shares} of the entities"


def _load(row: AccountRow, results: Results, what: str, parts: str = "") -> str:
    """A row's load against its target as a sentence's end: in an open loop what it was asked for (which the level
    judges) and what it served; else what it served."""
    window, open_loop = results.run.peak_window_s, results.open_loop
    phase = "in the steady phase" if results.run.steady_seconds > 0 else "over the ramp (the run had no steady phase)"
    life = getattr(row, "life_s", 0)
    average = f"its peak over its {life}-second life, shorter than the run's {peak_words(window)}" if life else peak_words(window)
    parts = f" ({parts})" if parts else ""
    if open_loop and row.offered_peak_eps:
        return (
            f"was asked for {row.offered_peak_eps:,.0f} entities/s at peak{parts}, {row.offered_ratio:.0%} of the "
            f"{row.target:,}/s {what} target ({average}); it served {row.peak_eps:,.0f}/s at peak ({row.ratio:.0%}); "
            f"means {phase}: asked {row.offered_mean_eps:,.0f}/s, served {row.mean_eps:,.0f}/s"
        )
    return (
        f"peaked at {row.peak_eps:,.0f} entities/s{parts}, {row.ratio:.0%} of the {row.target:,}/s {what} target "
        f"({average}); mean {row.mean_eps:,.0f}/s {phase}"
    )


def _not_the_budget(results: Results, scope: str) -> str:
    """Where a budget other than the target throttled the run (the throttling emulator's, a simulation's), that the
    level judges the target, not the budget: both figures named."""
    rate = budget(results.run, scope)
    target = results.run.account_target if scope == "account" else results.run.partition_target
    if not rate or rate == target:
        return ""
    return f". The level is against the {target:,}/s {scope} target; throttling was against {throttler(results.run, scope)}"


def _partition_remedy(kind: FindingKind, partition: str, peak: float, target: int, design: Mapping[str, Any]) -> str:
    """HOT: the split it needs, sized; WARM: the split that keeps it under 80 %; COOL: none."""
    if kind == K.HOT:
        return f"Spread the load: {spread_words(partition, peak, target, design)}"
    if kind == K.WARM:
        keys = keys_needed(peak, target, HEADROOM)
        return (
            f"Leave headroom: over the target the service answers 503 ServerBusy and rebalancing takes minutes. At "
            f"{peak:,.0f} entities/s, {keys} PartitionKeys would keep {named(partition)} under {HEADROOM:.0%} of its target; "
            "plan the split before the load grows."
        )
    return ""


def _account_remedy(kind: FindingKind, peak: float, target: int) -> str:
    under, roomy = accounts_needed(peak, target)
    if kind == K.HOT:
        return (
            f"The account, not one partition, passed its target: at {peak:,.0f} entities/s it needs at least {under} "
            f"storage accounts to be under its {target:,}/s target, {roomy} to stay under {HEADROOM:.0%}: "
            f"{SPREAD_ACCOUNTS}. Or check its target: {ACCOUNT_TARGETS}."
        )
    return (
        f"Leave headroom on the account: over its target the service answers 503 ServerBusy to every partition "
        f"('Operations per second is over the account limit'); at {peak:,.0f} entities/s, {roomy} storage accounts "
        f"would keep it under {HEADROOM:.0%}. {ACCOUNT_TARGETS[0].upper()}{ACCOUNT_TARGETS[1:]}."
    )


def advise_line(results: Results) -> str:
    """The command line that asks ``loadtest advise`` for the design that fits this workload (HOT's last words)."""
    run, ask = results.run, " Ask for the design that fits, sized and costed: loadtest advise "
    replayed = results.simulation.get("traffic") if results.simulation else None
    if run.target_kind == "advice":
        return ""
    if run.target_kind == "logs":
        profile = run.recorded.profile_out
        if profile:
            return f"{ask}--traffic {shlex.quote(str(profile))}"
        return f"{ask}--traffic traffic.json (write it: loadtest traffic LOGS --profile-out traffic.json)"
    if replayed:
        return f"{ask}--traffic {shlex.quote(str(replayed['profile']))} --scale {replayed['scale']:g}"
    folder = run.recorded.out or f"reports/{run.id}"
    return f"{ask}--from {shlex.quote(f'{folder}/results.json')}"


#: The levels, most severe first: a key that landed in a range judged as severely needs no finding of its own.
_LEVELS = (K.HOT, K.WARM, K.COOL)


def _landed_in(results: Results, partition: str) -> str:
    """The range (``NEWEST``, ``OLDEST``) whose landed keys ``partition`` is among, or ""."""
    return next((where for where, _, end in checklist.ranges(results) if checklist.landed(end, partition)), "")


def _ranges(results: Results, design: Mapping[str, Any]) -> list[Finding]:
    """The range where ordered new keys land, judged as one partition (one range partition serves it, however many keys
    come and go in it): its level when WARM or HOT (COOL: the APPEND_ONLY finding says its figure)."""
    out = []
    for where, _, end in checklist.ranges(results):
        judged = level(end["ratio"])
        if judged == K.COOL:
            continue
        peak = checklist.judged_peak(end, open_loop=results.open_loop)
        message = f"{named(where)} {checklist.range_words(end, open_loop=results.open_loop)}"
        remedy = _partition_remedy(judged, where, peak, end["target"], design)
        remedy += advise_line(results) if judged == K.HOT else ""
        out.append(finding(judged, message + _not_the_budget(results, "partition"), remedy=remedy, partition=where))
    return out


def levels(results: Results) -> list[Finding]:
    """Set each partition's level on all its rows (GET, PUT and their total carry the partition's), and the account's;
    the findings: each partition above COOL, the hottest even when COOL, and the account when above COOL."""
    open_loop, target = results.open_loop, results.run.partition_target
    rows: dict[str, list[PartitionRow]] = {}
    for row in results.partitions:
        if row.partition in GROUPS:
            row.finding = ""  # many partitions together: the per-partition target does not apply
        else:
            rows.setdefault(row.partition, []).append(row)
    hottest, design = results.hottest(), design_of(results)
    findings: list[Finding] = []
    ranges = _ranges(results, design)
    judged = {finding.partition: finding for finding in ranges}
    landed: dict[str, list[tuple[str, FindingKind]]] = {where: [] for where in judged}
    for partition, its in rows.items():
        head = results.headline(partition)
        peak, ratio = head.judged(open_loop)
        kind = level(ratio)
        for row in its:
            row.finding = kind
        where = _landed_in(results, partition)
        if where in judged and _LEVELS.index(kind) >= _LEVELS.index(FindingKind(judged[where].kind)):
            landed[where].append((partition, kind))  # a key that landed there: the range's finding judges it
            continue
        if kind == K.COOL and partition not in hottest:
            continue  # the hottest partition is COOL: so is every other, no need to list them
        message = f"partition {partition!r} {_load(head, results, 'partition', _parts(its, open_loop))}"
        remedy = _partition_remedy(kind, partition, peak, head.target or target, design)
        remedy += advise_line(results) if kind == K.HOT else ""
        findings.append(finding(kind, message + _not_the_budget(results, "partition"), remedy=remedy, partition=partition))

    for found in ranges:
        keys = sorted(landed[str(found.partition)])
        if keys:
            kinds = ", ".join(f"{n} {kind}" for kind, n in Counter(kind for _, kind in keys).most_common())
            found.message += (
                f"; {len(keys):,} of the keys that landed there, each judged over its own life, are its part and no "
                f"finding of their own ({kinds}: {keys[0][0]!r} … {keys[-1][0]!r})"
            )
    findings += ranges
    account = results.account
    peak, ratio = account.judged(open_loop)
    account.finding = level(ratio)
    if account.finding != K.COOL:
        said = f"the account {_load(account, results, 'account')}{_not_the_budget(results, 'account')}"
        remedy = _account_remedy(account.finding, peak, account.target)
        findings.append(finding(account.finding, said, remedy=remedy, act=Act.ACCOUNTS))
    return findings
