"""``loadtest merge``: engines' results (folders, results.json files, or a blob container) into one run's outputs —
results.json, timeseries.csv and report.html — judged as one run, with ``--fail-on``'s exit code."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

from .. import wrapup
from ..exit_codes import UsageError
from ..findings.assess import checks_for, exit_code
from ..options.commands import MERGE_OPTIONS
from ..outputs import REPORT_FILE, RESULTS_FILE, check_out
from ..results import Results
from .blobs import download_results
from .merge import merge

__all__ = ["merge_command"]


def _read(source: str, text: str) -> tuple[str, Results]:
    try:
        return source, Results.from_json(text)
    except ValueError as err:  # every field checked against its type; JSON errors are ValueErrors too
        raise UsageError(f"{source}: not a partition-stress results.json: {err}") from None


def _from_files(sources: list[str]) -> Iterator[tuple[str, Results]]:
    """Each engine's results, read as the merge takes it (every path checked first: a missing one reads nothing)."""
    found = []
    for source in sources:
        path = Path(source)
        found.append(path / RESULTS_FILE if path.is_dir() else path)
        if not found[-1].is_file():
            raise UsageError(f"{source}: no results.json there; give engines' run folders or their results.json files")
    for source, path in zip(sources, found, strict=True):
        yield _read(source, path.read_text(encoding="utf-8", errors="replace"))


def _of_run(sources: Iterator[tuple[str, Results]], run_id: str) -> Iterator[tuple[str, Results]]:
    """The engines, each of run ``run_id`` when one is given."""
    for source, results in sources:
        if run_id and results.run.id != run_id:
            raise UsageError(f"--run-id {run_id}: {source} is run {results.run.id!r}")
        yield source, results


def merge_command(ns: argparse.Namespace) -> int:
    given = {opt.dest: opt.value(ns) for opt in MERGE_OPTIONS}
    container, run_id = given["from_container"], given["run_id"]
    if container:
        if given["sources"]:
            raise UsageError("merge: give engines' results (SOURCE…) or --from-container, not both")
        if not run_id:
            raise UsageError(f"--from-container {container}: needs --run-id ID, the run whose engines uploaded there")
        texts = download_results(
            container,
            run_id,
            connection_string=given["connection_string"],
            account_url=given["account_url"],
            timeout=given["timeout"],
        )
        first = next(texts, None)
        if first is None:
            raise UsageError(
                f"--from-container {container} --run-id {run_id}: no engine's results.json under {container}/{run_id}/ "
                f"(engines put them there with --upload {container} --run-id {run_id})"
            )
        sources = (_read(name, text) for name, text in chain([first], texts))
    else:
        sources = _from_files(given["sources"])
    merged = merge(_of_run(sources, run_id))
    out = check_out(given["out"] or str(Path("reports") / merged.run.id / "merged"), overwrite=given["overwrite"])
    if not wrapup.finish(merged, out, target=None, started=time.time()):
        return 1
    code, messages = exit_code(merged, checks_for(given["fail_on"]))
    engines = ", ".join(share["engine"] for share in merged.engines)
    lines = [f"Merged {len(merged.engines)} engines of run {merged.run.id} ({engines}): {out / REPORT_FILE}"]
    lines += wrapup.console_lines(merged)
    lines += [f"  FAILED {message}" for message in messages]
    print("\n".join(lines), flush=True)
    return code
