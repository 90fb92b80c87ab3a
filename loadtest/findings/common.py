"""What every detector shares: a finding made from a row (or the run) with its kind's remedy, and the remedies by
scope, read from the kinds' one declaration (``finding_kinds.KINDS``)."""

from __future__ import annotations

from ..finding_kinds import KINDS
from ..finding_names import Act, Cause
from ..operations import OpClass
from ..results import Finding, FindingKind, PartitionRow

__all__ = ["ACCOUNT_REMEDIES", "REMEDIES", "SIMULATED_REMEDIES", "finding"]

#: Each kind's remedy (the docs'); the account's, where the account is the scope; a simulation's.
REMEDIES: dict[FindingKind, str] = {kind: k.remedy for kind, k in KINDS.items()}
ACCOUNT_REMEDIES: dict[FindingKind, str] = {kind: k.account_remedy for kind, k in KINDS.items() if k.account_remedy}
SIMULATED_REMEDIES: dict[FindingKind, str] = {kind: k.simulated_remedy for kind, k in KINDS.items() if k.simulated_remedy}


def finding(
    kind: FindingKind,
    message: str,
    row: PartitionRow | None = None,
    remedy: str = "",
    *,
    partition: str | None = None,
    cause: Cause | None = None,
    act: Act | None = None,
) -> Finding:
    """A finding of ``kind`` on ``row`` (a partition's row: the partition as a whole, GET and PUT its parts; or on
    ``partition``, or the account / run), with its kind's remedy, cause and act unless the detector measured
    otherwise."""
    declared = KINDS[kind]
    return Finding(
        kind=kind,
        partition=row.partition if row else partition,
        op_class=None if row is None or row.op_class == OpClass.ALL else row.op_class,
        message=message,
        remedy=remedy or REMEDIES[kind],
        cause=str(cause or declared.cause),
        act=str(act or declared.act),
    )
