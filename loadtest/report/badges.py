"""Each finding kind's badge: the colour of its severity (``finding_kinds.SEVERITY``), one style sheet every page includes.

A kind gets its style from its severity, so a new kind is visible wherever a badge shows it (the report, the
comparison, the live view) once its severity is declared.
"""

from __future__ import annotations

from typing import NamedTuple

from markupsafe import Markup

from ..results.finding_kinds import SEVERITY
from ..results.finding_names import FindingKind, Severity

__all__ = ["BADGES", "badge_colours", "badge_css", "colour"]


class Badge(NamedTuple):
    background: str
    text: str


#: Each severity's colours: white text on a dark background (contrast 4.5:1 or more).
BADGES: dict[Severity, Badge] = {
    Severity.FAILED: Badge("#6a1b9a", "#ffffff"),
    Severity.OVER: Badge("#c62828", "#ffffff"),
    Severity.BOUND: Badge("#455a64", "#ffffff"),
    Severity.NEAR: Badge("#b45309", "#ffffff"),
    Severity.OUTCOME: Badge("#1565c0", "#ffffff"),
    Severity.ADVICE: Badge("#00695c", "#ffffff"),
    Severity.CLEAR: Badge("#2e7d32", "#ffffff"),
}


def colour(kind: FindingKind) -> str:
    """The background of ``kind``'s badge (a chart's bar for a level, say)."""
    return BADGES[SEVERITY[kind]].background


def badge_colours() -> dict[str, Badge]:
    """Each finding kind's badge colours, from its severity (the pages' style sheet; the web UI's tab as JSON)."""
    return {str(kind): BADGES[severity] for kind, severity in SEVERITY.items()}


def badge_css() -> Markup:
    """The rules for ``<span class="kind KIND">``: one per finding kind, from its severity's colours."""
    rules = [".kind { font-weight: bold; padding: 1px 6px; border-radius: 3px; margin-right: 2px; }"]
    rules += [
        f".kind.{kind} {{ background: {badge.background}; color: {badge.text}; }}" for kind, badge in badge_colours().items()
    ]
    return Markup("\n  ".join(rules))
