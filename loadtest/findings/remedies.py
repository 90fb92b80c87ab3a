"""What a finding measured as its cause, what its remedy asks the user to do, and which asks contradict which causes;
and the remedies sized with arithmetic on what was measured (how many PartitionKeys, how many accounts).

Each finding carries one ``Cause`` and one ``Act`` (results.json keeps both). A remedy follows the cause measured, not
the finding's kind alone: an open loop's unserved demand that throttling refused asks for the design's change, the same
shortfall unsent by the generator asks for more processes. ``contradictions`` holds every finding's act against every
other finding's cause on the same partition: the one rule the detectors are tested against.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..counting.buckets import named
from ..results.finding_names import Act, Cause
from ..results.form import Finding
from ..workload.key_templates import bucket_key

__all__ = [
    "CONTRADICTS",
    "OWN_CONTRADICTS",
    "HEADROOM",
    "accounts_needed",
    "contradictions",
    "keys_needed",
    "spread_brief",
    "spread_words",
]

#: The share of a target a sized remedy keeps under (WARM starts at 80 %).
HEADROOM = 0.8


#: An act that contradicts a cause measured on the same partition: "no action" beside anything over or refused;
#: "send it whole" or "a real account" where the service refused the demand at its budget; "spread this partition"
#: where its own load does not explain its throttling.
CONTRADICTS: dict[Act, frozenset[Cause]] = {
    Act.NONE: frozenset(Cause) - {Cause.UNDER, Cause.PRACTICE, Cause.OUTCOME},
    Act.GENERATORS: frozenset({Cause.THROTTLED, Cause.ACCOUNT}),
    Act.REAL_ACCOUNT: frozenset({Cause.THROTTLED, Cause.ACCOUNT}),
    Act.SPREAD: frozenset({Cause.NEIGHBOUR, Cause.UNEXPLAINED}),
    Act.HEADROOM: frozenset({Cause.NEIGHBOUR, Cause.UNEXPLAINED}),
}
#: And within one finding: a remedy that spreads PartitionKeys for a refusal the account's limit made (the partition's
#: own load over its target is another finding's cause, and its own remedy).
OWN_CONTRADICTS: dict[Act, frozenset[Cause]] = {Act.SPREAD: frozenset({Cause.ACCOUNT}), Act.HEADROOM: frozenset({Cause.ACCOUNT})}


def contradictions(findings: Iterable[Finding]) -> list[str]:
    """Each pair of findings on one partition where one's act contradicts the other's cause, and each finding whose
    act contradicts its own cause, in words (none: one voice). Findings of the whole run or account are held
    against each other the same way."""
    by_scope: dict[str | None, list[Finding]] = {}
    for found in findings:
        by_scope.setdefault(found.partition, []).append(found)
    said = []
    for scope, group in by_scope.items():
        for one in group:
            for other in group:
                if not one.act or not other.cause:
                    continue
                table = OWN_CONTRADICTS if one is other else CONTRADICTS
                if Cause(other.cause) in table.get(Act(one.act), frozenset()):
                    said.append(
                        f"{scope!r}: {one.kind}'s remedy ({one.act}) contradicts {other.kind}'s measured cause ({other.cause})"
                    )
    return said


def keys_needed(peak: float, target: float, share: float = 1.0) -> int:
    """The fewest PartitionKeys (or accounts) that carry ``peak`` entities/s evenly with each at or under ``share`` of
    ``target``: ``ceil(peak / (share x target))``, at least 1."""
    if target <= 0:
        return 1
    return max(1, math.ceil(peak / (share * target) - 1e-9))


def accounts_needed(peak: float, target: float) -> tuple[int, int]:
    """Storage accounts to be under the account target, and to stay under ``HEADROOM`` of it."""
    return keys_needed(peak, target), keys_needed(peak, target, HEADROOM)


def spread_words(partition: str, peak: float, target: int, design: Mapping[str, Any]) -> str:
    """A hot partition's split, sized: how many PartitionKeys put it under its target and under ``HEADROOM`` of it,
    and how for its design (write sharding of one hot value, the docs' forms for increasing keys)."""
    under, roomy = keys_needed(peak, target), keys_needed(peak, target, HEADROOM)
    sized = (
        f"{named(partition)} needs {peak:,.0f} entities/s at peak: spread it over at least {under} PartitionKeys to be under "
        f"its {target:,}/s target, {roomy} to stay under {HEADROOM:.0%}"
    )
    strategy = str(design.get("key_strategy", "") or "")
    if strategy.startswith(("append-only", "prepend-only")) or design.get("increasing"):
        return (
            f"{sized}. Increasing (or decreasing) keys always land on the last (or first) range partition: prefix them "
            f"with a hash of {roomy} or more values ('03-…'), or put the seconds first (ssyyyyMMdd…), as the docs advise."
        )
    return (
        f"{sized}: write sharding, the PartitionKey prefixed with hash(RowKey) % {roomy} "
        f"({bucket_key(partition, 0, roomy)!r} … {bucket_key(partition, roomy - 1, roomy)!r}), so a point read still "
        "addresses one partition while a batch holds one prefix "
        "and a range scan reads each. A prefix, as the docs advise, not a suffix: suffixed keys stay adjacent in one "
        "range partition until the service splits it."
    )


def spread_brief(partition: str, peak: float, target: float, *, served: float = 1.0) -> str:
    """The split in one clause, where the partition's level words it whole: by its peak against ``target`` (what
    judged it), and at least as many keys as the demand was times what one key ``served`` (its share served)."""
    by_share = math.ceil(1 / served - 1e-9) if 0 < served < 1 else 1
    under = max(keys_needed(peak, target), by_share)
    roomy = max(keys_needed(peak, target, HEADROOM), under)
    return (
        f"Spread {partition!r} ({peak:,.0f} entities/s at peak, {served:.0%} of it served) over at least {under} "
        f"PartitionKeys, {roomy} to stay under {HEADROOM:.0%} of {target:,.0f}/s, as its level's remedy describes"
    )
