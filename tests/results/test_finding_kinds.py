"""Each finding kind declared once: everything that lists kinds reads the one declaration, and the docs' tables
say what it says (a kind added without its row, or a row left behind, fails here; the findings reference is generated
from the declaration, and tests/test_docs.py fails when the committed page drifts from it)."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT

from loadtest.exit_codes import UsageError
from loadtest.options.rules import fail_on
from loadtest.report.badges import BADGES
from loadtest.results.finding_kinds import BOUNDS, CHECKLIST, FAIL_ON, KINDS, RUN_FAILURES, SEVERITY
from loadtest.results.finding_names import FindingKind

DOCS = ROOT / "docs" / "reference"


def _docs_findings_table() -> dict[str, str]:
    """The findings reference's table (docs/reference/findings.md): kind -> its 'means' cell."""
    page = (DOCS / "findings.md").read_text()
    table = page.split("| finding | severity | means |", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, str] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for kind in re.findall(r"[A-Z_]{3,}", cells[0]):
            rows[kind] = cells[2]
    return rows


def test_every_kind_is_declared_whole_and_every_list_of_kinds_is_derived_from_it():
    assert set(KINDS) == set(FindingKind) == set(SEVERITY)
    assert FAIL_ON == tuple(k for k, d in KINDS.items() if d.fail_on)
    assert fail_on("--fail-on", ",".join(FAIL_ON)) == FAIL_ON  # --fail-on takes every one of them, and no other
    with pytest.raises(UsageError) as refused:
        fail_on("--fail-on", next(k for k, d in KINDS.items() if not d.fail_on))
    assert ", ".join(k.lower() for k in FAIL_ON) in str(refused.value)
    assert set(CHECKLIST) == {k for k, d in KINDS.items() if d.practice} and all(CHECKLIST.values())
    assert set(RUN_FAILURES) == {FindingKind.TARGET_LOST, FindingKind.INCOMPLETE}
    assert all(BOUNDS.values()) and set(BOUNDS) <= set(KINDS)
    for kind, declared in KINDS.items():
        assert declared.means and declared.remedy.endswith((".", ")")), kind
        assert declared.severity in BADGES, kind  # a badge on every page


def test_the_docs_findings_table_names_every_kind_and_the_fail_on_row_points_at_it():
    rows = _docs_findings_table()
    assert set(rows) == {k.value for k in FindingKind}, set(rows) ^ {k.value for k in FindingKind}
    assert all(rows[k.value] for k in FindingKind), rows
    options = (DOCS / "options.md").read_text()  # the run's options explained, written by hand
    fail_on_row = next(line for line in options.splitlines() if line.startswith("| `--fail-on` |"))
    # no list of kinds of its own, which a new kind would have to be added to by hand: the generated table's column
    assert "[Findings](findings.md)" in fail_on_row and "`--fail-on` column" in fail_on_row, fail_on_row
    assert not re.search(r"[a-z_]+,[a-z_]+,[a-z_]+", fail_on_row), fail_on_row
