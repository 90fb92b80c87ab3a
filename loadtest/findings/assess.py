"""Findings from the results, one detector per family, and the checks that turn ``--fail-on`` into an exit code.

Each finding carries the docs' remedy in one sentence (``finding_kinds.KINDS``). Each check's ``fails(results)`` returns a
message or ``None``; all are collected and the run exits once. A new kind: its declaration in ``kinds``, its
detector in its family's module (or a new family here).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..exit_codes import EXIT_CHECK_FAILED, EXIT_OK, EXIT_RUN_FAILED
from ..results.finding_kinds import RUN_FAILURES
from ..results.finding_names import Act, Cause, K
from ..results.form import Attempt, Finding, FindingKind, Results
from . import checklist
from .capacity import capacity
from .ceiling import ceiling
from .levels import levels
from .losses import incomplete, losses
from .open_loop import demand
from .order import ranked
from .remedies import CONTRADICTS
from .spread import spread
from .throttling import failures

__all__ = ["DETECTORS", "FindingCheck", "assess", "checks_for", "exit_code"]

#: The families' detectors, in the order their findings are listed (results.json, the report).
DETECTORS: tuple[Callable[[Results], list[Finding]], ...] = (
    levels,
    spread,
    demand,
    failures,
    capacity,
    losses,
    ceiling,
    checklist.findings,
    incomplete,  # last: a detector that failed before it is among the steps it names
)


def assess(results: Results, attempt: Attempt | None = None) -> Results:
    """Set each row's finding and the results' findings list, in the one order (``order.ranked``), a partition's
    level never saying "no action" beside a finding over or refused; returns ``results``. With ``attempt`` (after a
    run: ``wrapup``), each detector is a step of its own: one that fails costs only its findings, and is INCOMPLETE."""
    found: list[Finding] = []
    for detector in DETECTORS:
        step = f"the findings of {detector.__module__.removeprefix('loadtest.')}"
        if attempt is None or detector is incomplete:
            found.extend(detector(results))
        else:
            attempt(step, lambda d=detector: found.extend(d(results)))
    results.findings = ranked(results, _at_least(results, _one_voice(found)))
    return results


#: What a finding on a key not kept apart in every second says of its figures (``PartitionRow.partial``): its totals are
#: whole (each part's folded counts added: ``results.whole_totals``), its per-second figures are of the seconds kept.
AT_LEAST = (
    " Its rates are at least these: some of its seconds were counted among the other partitions (it was not among the "
    "hottest keys then); its totals include them."
)


def _at_least(results: Results, findings: list[Finding]) -> list[Finding]:
    """A finding on a partition some of whose seconds were folded says its rates are a lower bound."""
    partial = {row.partition for row in results.partitions if row.partial}
    for finding in findings:
        if finding.partition in partial and AT_LEAST not in finding.message:
            finding.message += AT_LEAST
    return findings


def _one_voice(findings: list[Finding]) -> list[Finding]:
    """A COOL level's "no action needed" where another finding on its partition, or on the account, measured
    something over or refused (throttled, unserved, failed): then its own load is under its target and the others
    say what to act on."""
    acts_on = CONTRADICTS[Act.NONE]
    for cool in (f for f in findings if f.kind == K.COOL and f.act == Act.NONE):
        others = [
            f
            for f in findings
            if f is not cool
            and Cause(f.cause or Cause.PRACTICE) in acts_on
            and (f.partition == cool.partition or (f.partition is None and f.kind in (K.HOT, K.WARM)))
        ]
        if others:
            kinds = ", ".join(dict.fromkeys(str(f.kind) for f in others))
            cool.remedy = (
                "Its own load is under its target at this load; act on what the other findings measured "
                f"({kinds}), not on this level."
            )
            cool.act = str(Act.NOTE)
    return findings


@dataclass(frozen=True)
class FindingCheck:
    """Fails when a finding of ``kind`` occurred (``--fail-on kind``)."""

    kind: FindingKind

    def fails(self, results: Results) -> str | None:
        hits = [f for f in results.findings if f.kind == self.kind]
        if not hits:
            return None
        return f"--fail-on {self.kind.lower()}: {len(hits)} {self.kind} finding(s); first: {hits[0].message}"


def checks_for(fail_on: tuple[FindingKind, ...]) -> list[FindingCheck]:
    return [FindingCheck(FindingKind(kind.upper())) for kind in fail_on]


def exit_code(results: Results, checks: list[FindingCheck]) -> tuple[int, list[str]]:
    """Exit 1 when the run itself failed (its target lost, a step missing); else run every check, exit 3 if any
    failed, with all their messages."""
    messages = [m for m in (check.fails(results) for check in checks) if m]
    failures = [f.message for f in results.findings if f.kind in RUN_FAILURES]
    if failures:
        return EXIT_RUN_FAILED, failures + messages
    return (EXIT_CHECK_FAILED if messages else EXIT_OK), messages
