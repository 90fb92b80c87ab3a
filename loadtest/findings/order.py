"""The one order findings are listed in, heaviest first: those about a sliver of the requests (``SLIGHT``: a handful of
5xx in a day of logs) after all the others; then by severity, then by how far over its target the finding's
partition (or the account) went, then by partition, then in the kinds' declared order. ``assess`` sorts the results'
findings by it once; the console, report.html, the Partitions tab, Locust's HTML report section, ``compare`` and the
JUnit file keep the order they are given.
"""

from __future__ import annotations

from collections.abc import Callable

from ..results.finding_kinds import KINDS, SEVERITY
from ..results.finding_names import Cause, K, Severity
from ..results.form import Finding, Results
from ..service.operations import OpClass

__all__ = ["SLIGHT", "rank", "ranked", "weight"]

#: A finding about fewer than this share of the requests counted ranks below every finding about more, whatever its
#: kind: two 500s in a day of logs are not the first thing to read beside an hour of throttling.
SLIGHT = 0.001

_KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}
_OP_ORDER = {None: 0, OpClass.GET: 1, OpClass.PUT: 2, OpClass.ALL: 3}
_LEVELS = (K.HOT, K.WARM, K.COOL)


def weight(finding: Finding) -> Severity:
    """A finding's severity: its kind's, except 4xx answers (the application's own business: not found, conflicts,
    failed conditions), which weigh as much as a level near its target, below the levels over it and throttling."""
    if finding.kind == K.ERRORS and finding.cause == Cause.APPLICATION:
        return Severity.NEAR
    return SEVERITY[finding.kind]


def rank(results: Results) -> Callable[[Finding], tuple]:
    """The sort key of ``results``' findings (``sorted(findings, key=rank(results))``)."""
    target = results.run.partition_target or 1
    ratios = {partition: peak / target for partition, peak in results.peaks().items()}  # each judged on its total
    account = results.account.judged(results.open_loop)[1]

    def key(finding: Finding) -> tuple:
        if finding.partition is None:
            over = account if finding.kind in _LEVELS else 0.0
        else:
            over = ratios.get(finding.partition, 0.0)
        return (
            finding.share is not None and finding.share < SLIGHT,
            weight(finding),
            -round(over, 4),
            finding.partition is not None,  # of one weight and ratio: the account's (it bounds every partition) first
            finding.partition or "",
            _KIND_ORDER[K(finding.kind)],
            _OP_ORDER.get(finding.op_class, 4),
        )

    return key


def ranked(results: Results, findings: list[Finding] | None = None) -> list[Finding]:
    """``findings`` (the results' own by default) in the one order."""
    return sorted(results.findings if findings is None else findings, key=rank(results))
