"""THROTTLED and ERRORS: each partition's and op class's failed attempts, by the service's error code; throttled
ones by reason, each with the budget or target that judged it (``throttlers.throttler``); the users' own tasks' errors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from ..bounds.throttlers import throttler
from ..buckets import named
from ..finding_kinds import SPREAD_ACCOUNTS
from ..finding_names import K
from ..operations import OpClass
from ..results import Finding, PartitionRow, Results
from ..service_errors import BUSY, CAUSES, THROTTLING_CODES
from .common import ACCOUNT_REMEDIES, REMEDIES, finding

__all__ = ["failures", "reasons", "throttled_failures", "throttled_message"]

TASK_ERRORS = (
    "Fix the task code (Locust's log has each traceback): the operations a failing task never reached were never "
    "sent, so every figure lacks them."
)


def failures(results: Results) -> list[Finding]:
    """THROTTLED and ERRORS for each partition and op class, then the tasks' exceptions."""
    findings: list[Finding] = []
    for row in results.rows():
        if row.op_class == OpClass.ALL:
            continue
        throttled_errors = throttled_failures(row)
        if row.throttled or throttled_errors:
            findings.append(finding(K.THROTTLED, throttled_message(results, [row]), row, _throttled_remedy(row)))
        other = {code: n for code, n in row.errors.items() if code not in THROTTLING_CODES}
        if other:
            codes = ", ".join(f"{code} x{n:,}" for code, n in sorted(other.items(), key=lambda kv: -kv[1]))
            findings.append(
                finding(
                    K.ERRORS,
                    (
                        f"{row.op_class} on {named(row.partition)}: {sum(other.values()):,} of {row.requests:,} "
                        f"operations failed ({codes})"
                    ),
                    row,
                    _causes(other),
                )
            )

    task_errors = results.workload.get("task_errors", [])
    if task_errors:
        raised = ", ".join(f"{e['error']} x{e['count']:,}" for e in task_errors[:3])
        total = sum(e["count"] for e in task_errors)
        findings.append(finding(K.ERRORS, f"the users' tasks raised {total:,} exceptions ({raised})", remedy=TASK_ERRORS))

    return findings


def throttled_failures(row: PartitionRow) -> int:
    """Operations that failed with a throttling code (after their retries)."""
    return sum(n for code, n in row.errors.items() if code in THROTTLING_CODES)


def reasons(results: Results, throttled_by: Mapping[str, int]) -> str:
    """The throttled attempts by reason, as the answers told them apart, each with the budget or target that judged
    it (``throttlers.throttler``: the emulator's or a simulation's figure, else Azure's; none for older results)."""
    if not throttled_by:
        return ""
    words = {
        "partition": f"the partition over its target ({throttler(results.run, 'partition')})",
        "account": f"the account over its limit ({throttler(results.run, 'account')})",
        "timeout": "timed out",
        BUSY: "503 ServerBusy, the record not telling a partition's target from the account's limit",
    }
    by = sorted(throttled_by.items(), key=lambda kv: (-kv[1], kv[0]))
    return ": " + ", ".join(f"{n:,} {words.get(reason, reason)}" for reason, n in by)


def throttled_message(results: Results, rows: list[PartitionRow]) -> str:
    """A THROTTLED finding's words for one partition's rows: an op class's (the finding's), or several in one line
    (the console's), each op class's count named."""
    by_reason: Counter[str] = Counter()
    for row in rows:
        by_reason.update(row.throttled_by)
    each = f"{', '.join(f'{r.op_class} {r.throttled:,}' for r in rows)}; " if len(rows) > 1 else ""
    return (
        f"{' and '.join(r.op_class for r in rows)} on {named(rows[0].partition)}: {sum(r.throttled for r in rows):,} throttled "
        f"attempts ({each}503 ServerBusy / 500 OperationTimedOut / 504){reasons(results, by_reason)}, "
        f"{sum(throttled_failures(r) for r in rows):,} operations failed with them"
    )


def _throttled_remedy(row: PartitionRow) -> str:
    """THROTTLED's remedy for what refused the row: the account's where only its limit did, the partition's else (and
    the account's besides, where it refused some)."""
    if "account" not in row.throttled_by:
        return REMEDIES[K.THROTTLED]
    if set(row.throttled_by) == {"account"}:
        return ACCOUNT_REMEDIES[K.THROTTLED]
    return f"{REMEDIES[K.THROTTLED]} Where the account was over its limit: {SPREAD_ACCOUNTS}."


def _causes(codes: dict[str, int]) -> str:
    """The ERRORS remedy: what each code present says about the run (errors.CAUSES), then the docs' rule."""
    known = [f"{code}: {CAUSES[code]}." for code in codes if code in CAUSES]
    return " ".join([*known, REMEDIES[K.ERRORS]])
