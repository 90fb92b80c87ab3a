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
from .findings.assess import assess
from .outputs import REPORT_FILE, SERVER_LOGS_FILE
from .redact import redact
from .results import Results
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
    """The findings as the console prints them: in the one order (``findings.order``, as results.json, the report and
    the tab list them), at most ``shown`` lines and the rest counted. results.json and the report keep every one."""
    lines = [f"  {finding.kind:<15} {finding.message}" for finding in results.findings[:shown]]
    if len(results.findings) > shown:
        lines.append(f"  … and {len(results.findings) - shown} more findings in the report")
    return lines
