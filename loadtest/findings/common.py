"""What every detector shares: a finding made from a row (or the run) with its kind's remedy, cause and act, read
from the kinds' one declaration (``finding_kinds.KINDS``)."""

from __future__ import annotations

from ..results.finding_kinds import KINDS
from ..results.finding_names import Act, Cause
from ..results.form import Finding, FindingKind, PartitionRow
from ..service.operations import OpClass

__all__ = ["REMEDIES", "finding"]

#: Each kind's remedy (the docs'): a detector words its own where it measured more (the account's, a sized split).
REMEDIES: dict[FindingKind, str] = {kind: k.remedy for kind, k in KINDS.items()}


def finding(
    kind: FindingKind,
    message: str,
    row: PartitionRow | None = None,
    remedy: str = "",
    *,
    partition: str | None = None,
    cause: Cause | None = None,
    act: Act | None = None,
    share: float | None = None,
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
        share=share,
    )
