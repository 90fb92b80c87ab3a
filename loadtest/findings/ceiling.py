"""CEILING: a ceiling search's outcome (the judgement is the ceiling wing's: ``ceiling.judge``)."""

from __future__ import annotations

from typing import Any

from ..ceiling.remedies import LIMITS
from ..results.finding_names import K
from ..results.form import Finding, FindingKind, Results
from .common import REMEDIES, finding

__all__ = ["ceiling"]


def ceiling(results: Results) -> list[Finding]:
    """The search's one finding, when the run was a search."""
    return [_ceiling(results.ceiling, results.run.partition_target)] if results.ceiling else []


def _ceiling_remedy(limit: str) -> str:
    """A ceiling search's remedy by what limited it (``LIMITS``): its finding's remedy, or its own words."""
    remedy = LIMITS[limit]
    return REMEDIES[remedy] if isinstance(remedy, FindingKind) else remedy


def _ceiling(search: dict[str, Any], target: int) -> Finding:
    """The search's outcome in one finding: the ceiling (the last good step, its hottest partition against the
    partition ``target``) and what ended it (the judgement names the budget or target that throttled)."""
    ceiling, limit = search["ceiling"], search["limited_by"]
    if ceiling is None:
        return finding(K.CEILING, f"no ceiling found: {search['reason']}", remedy=_ceiling_remedy(limit))
    hottest = ceiling["partitions"][0] if ceiling["partitions"] else None
    where = (
        f", the hottest partition {hottest['partition']!r} {hottest['entities_per_s']:,.0f}/s, "
        f"{hottest['entities_per_s'] / target:.0%} of the {target:,}/s partition target"
        if hottest
        else ""
    )
    said = f"limited by {limit} {search['reason']}" if limit else search["reason"]
    return finding(
        K.CEILING,
        (
            f"sustained ceiling {ceiling['entities_per_s']:,.0f} entities/s ({ceiling['served_per_s']:,.0f} operations/s "
            f"served of {ceiling['offered_per_s']:,} offered{where}); {said}"
        ),
        remedy=_ceiling_remedy(limit),
    )
