"""ERRORS: the failures other than throttling, each with what its code says and what to do about its class (a 4xx
the application's, a 5xx the service's, no answer the client's path: ``error_codes.error_class``). Per partition and op
class in a run; in production logs one per error code across the logs; then the users' tasks' own exceptions. Each
carries the share of the requests it is about (a finding's ``share``), which the one order weighs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from ..counting.buckets import named
from ..results.finding_names import Cause, K
from ..results.form import Finding, Results
from ..service.error_codes import CAUSES, CLASS_REMEDIES, THROTTLING_CODES, error_class
from ..service.operations import OpClass
from .common import finding

__all__ = ["ERROR_PARTITIONS_LISTED", "TASK_ERRORS", "errors", "share"]

TASK_ERRORS = (
    "Fix the task code (Locust's log has each traceback): the operations a failing task never reached were never "
    "sent, so every figure lacks them."
)
ERROR_PARTITIONS_LISTED = 5


def errors(results: Results) -> list[Finding]:
    """ERRORS per partition and op class (production logs: per error code); then the tasks' exceptions."""
    findings = _logged_errors(results) if results.logs else _run_errors(results)
    task_errors = results.workload.get("task_errors", [])
    if task_errors:
        raised = ", ".join(f"{e['error']} x{e['count']:,}" for e in task_errors[:3])
        total = sum(e["count"] for e in task_errors)
        findings.append(finding(K.ERRORS, f"the users' tasks raised {total:,} exceptions ({raised})", remedy=TASK_ERRORS))
    return findings


def _run_errors(results: Results) -> list[Finding]:
    """A run's failures other than throttling, per partition and op class, by error code."""
    findings = []
    requests = sum(row.requests for row in results.rows() if row.op_class != OpClass.ALL)
    for row in results.rows():
        other = {code: n for code, n in row.errors.items() if code not in THROTTLING_CODES}
        if row.op_class == OpClass.ALL or not other:
            continue
        codes = ", ".join(f"{code} x{n:,}" for code, n in sorted(other.items(), key=lambda kv: -kv[1]))
        message = (
            f"{row.op_class} on {named(row.partition)}: {sum(other.values()):,} of {row.requests:,} operations failed ({codes})"
        )
        findings.append(finding(K.ERRORS, message, row, _causes(other), share=share(sum(other.values()), requests)))
    return findings


def share(count: int, of: int) -> float | None:
    """``count`` as a share of ``of`` (None where nothing was counted)."""
    return round(count / of, 6) if of else None


def _logged_errors(results: Results) -> list[Finding]:
    """Production logs: one ERRORS finding per error code across the logs — its count, its share of the requests, the
    partitions with the most — 4xx answers as the application's own business, other failures as they are."""
    by_code: dict[str, Counter[str]] = {}
    requests = 0
    for row in results.rows():
        if row.op_class == OpClass.ALL:
            continue
        requests += row.requests
        for code, n in row.errors.items():
            if code not in THROTTLING_CODES:
                by_code.setdefault(code, Counter())[row.partition] += n
    status = results.logs.get("error_status", {})
    findings = []
    for code, where in sorted(by_code.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        total, http = sum(where.values()), status.get(code, -1)
        client = error_class(code, http if http > 0 else None) == "application"
        most = ", ".join(f"{named(p)} {n:,}" for p, n in where.most_common(ERROR_PARTITIONS_LISTED))
        more = f" and {len(where) - ERROR_PARTITIONS_LISTED:,} more" if len(where) > ERROR_PARTITIONS_LISTED else ""
        answered = f"HTTP {http} " if http > 0 else ""
        message = (
            f"{total:,} requests ({total / requests:.2%} of {requests:,}) were answered {answered}{code} across "
            f"{len(where):,} partition{'s' if len(where) > 1 else ''}; the most: {most}{more}"
        )
        if client:
            message += ". A 4xx answer is the application's own business (an entity not there, a conflict, a condition)"
        findings.append(
            finding(
                K.ERRORS,
                message,
                remedy=_causes({code: total}, {code: http} if http > 0 else None),
                cause=Cause.APPLICATION if client else Cause.FAILED,
                share=share(total, requests),
            )
        )
    return findings


def _causes(codes: Mapping[str, int], status: Mapping[str, int] | None = None) -> str:
    """The ERRORS remedy: what each code present says (``error_codes.CAUSES``), then what to do about each class of
    failure among them (a 4xx the application's, a 5xx the service's, no answer the client's path), by the codes' status
    where the logs give it, else by the code."""
    known = [f"{code}: {CAUSES[code]}." for code in codes if code in CAUSES]
    classes = dict.fromkeys(error_class(code, (status or {}).get(code)) for code in codes)
    return " ".join([*known, *(CLASS_REMEDIES[c] for c in sorted(classes, key=_CLASS_ORDER.index))])


_CLASS_ORDER = ("service", "network", "application", "")
