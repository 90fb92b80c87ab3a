"""After the load: the results read back, assessed and written, every step on its own; then the findings as the
console prints them.

Once load has run, its figures must land: a step that fails (the read-back against a target
that died, a detector, a renderer, a file beside results.json that cannot be written) becomes an
INCOMPLETE finding saying what is missing, and the steps after it still run. results.json is
written first and last, strict JSON, whole or not at all; only a results.json that cannot be
written at all (a full disk) ends the run without one, said in one line naming where.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .account.endpoint import Target
from .account.failures import SDK_ERRORS, explain
from .exit_codes import ToolError
from .findings.assess import assess
from .findings.levels import advise_line
from .outputs import BUCKETS_FILE, REPORT_FILE, RESULTS_FILE, SERVER_LOGS_FILE
from .redact import redact
from .report import server_logs
from .report.headline import verdict_sentences
from .results.finding_names import K
from .results.form import Results
from .service.error_codes import ServiceError

__all__ = ["CONSOLE_FINDINGS", "console_lines", "finish", "written_line"]

#: Finding lines the console prints after a run; the rest are counted (the report and results.json hold every one).
CONSOLE_FINDINGS = 12

log = logging.getLogger("loadtest")


def _render(results: Results, out: Path) -> None:
    from .report import render  # matplotlib and jinja load only here

    render(results, out)


#: The outputs written beside results.json and timeseries.csv, each on its own.
OUTPUTS: tuple[tuple[str, Callable[[Results, Path], Any]], ...] = (
    (SERVER_LOGS_FILE, server_logs.write),
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
    report: bool = True,
) -> bool:
    """Read back (``read_back`` gives the integrity figures), assess, write every output (``outputs`` beside
    results.json and timeseries.csv, report.html unless ``report`` is false: --no-report; ``target``: none for a
    simulation), then hand the written folder over (``upload``: its step's name and action); False if results.json
    itself could not be written (said in one line naming where)."""

    def attempt(step: str, action: Callable[[], object]) -> bool:
        try:
            action()
            return True
        except Exception as err:  # noqa: BLE001 -- a failing step costs only itself
            known = isinstance(err, (*SDK_ERRORS, ServiceError))
            said = isinstance(err, ToolError)  # a step's own one line
            error = redact(str(explain(err, target)) if known else str(err) if said else f"{type(err).__name__}: {err}")
            error = " ".join(error.split())  # one line, whatever the error held
            if not any(s["step"] == step and s["error"] == error for s in results.incomplete):  # (a rewrite's retry)
                log.error("%s failed: %s", step, error)
                results.incomplete.append({"step": step, "error": error, "at_s": round(time.time() - started, 1)})
            return False

    def landed(write: Callable[[], object]) -> bool:
        """results.json written by ``write``; False, said in one line (where and why), if it cannot be."""
        try:
            write()
            return True
        except Exception as err:  # noqa: BLE001 -- the one file that must land
            log.error("the results could not be written to %s: %s", out / RESULTS_FILE, _why(err))
            return False

    if read_back is not None:
        attempt("the read-back of acknowledged writes", lambda: setattr(results, "integrity", read_back()))
    assess(results, attempt)
    assessed = len(results.incomplete)
    written: list[bool] = []  # whether the series' rows went inside results.json (``Results.write``)
    if not landed(lambda: written.append(results.write(out, attempt))):
        return False
    if BUCKETS_FILE not in {s["step"] for s in results.incomplete}:
        results.let_go_of_buckets()
    for name, write in outputs:
        if name == REPORT_FILE and not report:
            continue
        attempt(name, lambda write=write: write(results, out))
    if upload is not None:
        attempt(upload[0], lambda: upload[1](out))
    if len(results.incomplete) > assessed:
        assess(results, attempt)
        return landed(lambda: results.write_json(out, attempt, series_inline=written[0]))  # with what is missing
    return True


def written_line(out: Path, report: bool) -> str:
    """Where the outputs are, as the console says it: the report, or results.json when --no-report left it undrawn."""
    return f"Report: {out / REPORT_FILE}" if report else f"Results: {out / RESULTS_FILE} (--no-report)"


def _why(err: BaseException) -> str:
    """An error in a few words: an OS error's own (No space left on device), else its type and message, one line."""
    said = err.strerror if isinstance(err, OSError) and err.strerror else f"{type(err).__name__}: {err}"
    return " ".join(redact(said).split())


def console_lines(results: Results, shown: int = CONSOLE_FINDINGS) -> list[str]:
    """The report's first sentence, then the findings as the console prints them: in the one order
    (``findings.order``, as results.json, the report and the tab list them), at most ``shown`` lines and the rest
    counted, and after the first HOT that ends asking ``loadtest advise``, that command. results.json and the report
    keep every one."""
    lines, ask = verdict_sentences(results)[:1], advise_line(results).strip()
    for finding in results.findings[:shown]:
        lines.append(f"  {finding.kind:<15} {finding.message}")
        if ask and finding.kind == K.HOT and finding.remedy.endswith(ask):
            lines.append(f"  {'':<15} {ask}")
            ask = ""
    if len(results.findings) > shown:
        lines.append(f"  … and {len(results.findings) - shown} more findings in the report")
    return lines
