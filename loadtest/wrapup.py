"""After the load: the results read back, assessed and written, every step on its own; then the findings as the
console prints them.

Once load has run, its figures must land: a step that fails (the read-back against a target
that died, a renderer, a file that cannot be written) becomes an INCOMPLETE finding saying what
is missing, and the steps after it still run. results.json is written first and last.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import serverlogs
from .exit_codes import ToolError
from .failures import SDK_ERRORS, explain
from .finding_kinds import SEVERITY
from .findings.assess import assess
from .findings.throttling import throttled_message
from .outputs import REPORT_FILE, SERVER_LOGS_FILE
from .redact import redact
from .results import Finding, FindingKind, Results
from .service_errors import ServiceError
from .target import Target

__all__ = ["CONSOLE_FINDINGS", "console_lines", "finish"]

#: Finding lines the console prints after a run; the rest are counted (the report and results.json hold every one).
CONSOLE_FINDINGS = 12

log = logging.getLogger("loadtest")


def _render(results: Results, out: Path) -> None:
    from .report import render  # matplotlib and jinja load only here

    render(results, out)


#: The outputs written beside results.json and timeseries.csv, each on its own.
OUTPUTS: tuple[tuple[str, Callable[[Results, Path], Any]], ...] = (
    (SERVER_LOGS_FILE, serverlogs.write),
    (REPORT_FILE, _render),
)


def finish(
    results: Results,
    out: Path,
    *,
    target: Target | None,
    started: float,
    read_back: Callable[[], dict[str, Any]] | None = None,
    outputs: tuple[tuple[str, Callable[[Results, Path], Any]], ...] = OUTPUTS,
    upload: tuple[str, Callable[[Path], object]] | None = None,
) -> bool:
    """Read back (``read_back`` gives the integrity figures), assess, write every output (``outputs`` beside
    results.json and timeseries.csv; ``target``: none for a simulation), then hand the written folder over
    (``upload``: its step's name and action); False if results.json itself could not be written."""

    def attempt(step: str, action: Callable[[], object]) -> bool:
        try:
            action()
            return True
        except Exception as err:  # noqa: BLE001 -- a failing step costs only itself
            known = isinstance(err, (*SDK_ERRORS, ServiceError))
            said = isinstance(err, ToolError)  # a step's own one line
            error = redact(str(explain(err, target)) if known else str(err) if said else f"{type(err).__name__}: {err}")
            log.error("%s failed: %s", step, error)
            results.incomplete.append({"step": step, "error": error, "at_s": round(time.time() - started, 1)})
            return False

    if read_back is not None:
        attempt("the read-back of acknowledged writes", lambda: setattr(results, "integrity", read_back()))
    assess(results)
    try:
        results.write(out)
    except OSError as err:
        log.error("the results could not be written to %s: %s", out, err)
        return False
    results.let_go_of_buckets()
    if not all([attempt(name, lambda write=write: write(results, out)) for name, write in outputs]):
        assess(results)
        results.write(out)  # now with what is missing among its findings
    if upload is not None and not attempt(upload[0], lambda: upload[1](out)):
        assess(results)
        results.write(out)  # the local outputs say the hand-over failed
    return True


def console_lines(results: Results, shown: int = CONSOLE_FINDINGS) -> list[str]:
    """The findings as the console prints them: heaviest first (``SEVERITY``; of one weight the account's level first,
    as it bounds every partition, else in the verdict's order), one THROTTLED line per partition with its op classes,
    at most ``shown`` lines and the rest counted. results.json and the report keep every finding as it is."""
    ordered = sorted(_one_throttled_per_partition(results), key=lambda f: (SEVERITY[f.kind], not _accounts_level(f)))
    lines = [f"  {finding.kind:<15} {finding.message}" for finding in ordered[:shown]]
    if len(ordered) > shown:
        lines.append(f"  … and {len(ordered) - shown} more findings in the report")
    return lines


def _accounts_level(finding: Finding) -> bool:
    """The account's HOT or WARM (a level with no partition and no op class: the account's row)."""
    return finding.kind in (FindingKind.HOT, FindingKind.WARM) and finding.partition is None and finding.op_class is None


def _one_throttled_per_partition(results: Results) -> list[Finding]:
    """The findings with each partition's THROTTLED ones (one per op class) as one, where the first of them stood."""
    throttled: dict[str, list[Finding]] = {}
    for finding in results.findings:
        if finding.kind == FindingKind.THROTTLED and finding.partition is not None:
            throttled.setdefault(finding.partition, []).append(finding)
    out = []
    for finding in results.findings:
        group = throttled.get(finding.partition, []) if finding.kind == FindingKind.THROTTLED else []
        if len(group) < 2:
            out.append(finding)
        elif finding is group[0]:
            ops = {f.op_class for f in group}
            rows = [r for r in results.rows() if r.partition == finding.partition and r.op_class in ops]
            out.append(
                Finding(
                    kind=finding.kind,
                    partition=finding.partition,
                    op_class=None,
                    message=throttled_message(results, rows),
                    remedy=finding.remedy,
                )
            )
    return out
