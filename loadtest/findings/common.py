"""What every detector shares: a finding made from a row (or the run) with its kind's remedy, and the remedies by
scope, read from the kinds' one declaration (``finding_kinds.KINDS``)."""

from __future__ import annotations

from ..finding_kinds import KINDS
from ..results import Finding, FindingKind, PartitionRow

__all__ = ["ACCOUNT_REMEDIES", "REMEDIES", "SIMULATED_REMEDIES", "finding"]

#: Each kind's remedy (the docs'); the account's, where the account is the scope; a simulation's.
REMEDIES: dict[FindingKind, str] = {kind: k.remedy for kind, k in KINDS.items()}
ACCOUNT_REMEDIES: dict[FindingKind, str] = {kind: k.account_remedy for kind, k in KINDS.items() if k.account_remedy}
SIMULATED_REMEDIES: dict[FindingKind, str] = {kind: k.simulated_remedy for kind, k in KINDS.items() if k.simulated_remedy}


def finding(
    kind: FindingKind, message: str, row: PartitionRow | None = None, remedy: str = "", *, partition: str | None = None
) -> Finding:
    """A finding of ``kind`` on ``row`` (or on ``partition`` as a whole, or the account / run), with its kind's remedy
    unless the detector words one."""
    return Finding(
        kind=kind,
        partition=row.partition if row else partition,
        op_class=row.op_class if row else None,
        message=message,
        remedy=remedy or REMEDIES[kind],
    )
