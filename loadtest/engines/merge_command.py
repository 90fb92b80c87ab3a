"""``loadtest merge``: engines' results (folders, results.json files, or a blob container) into one run's outputs —
results.json, timeseries.csv and report.html — judged as one run, with ``--fail-on``'s exit code."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .. import wrapup
from ..exit_codes import UsageError
from ..findings.assess import checks_for, exit_code
from ..options.commands import MERGE_OPTIONS
from ..outputs import BUCKETS_FILE, RESULTS_FILE, check_out
from ..progress import Progress
from ..report import junit
from .blobs import download_buckets, download_results, results_blobs
from .engine_read import read_results
from .merge import BucketsBeside, merge, merge_apart, merge_workers

__all__ = ["merge_command"]


def _results_files(sources: list[str]) -> dict[str, Path]:
    """Each engine's results.json, by its source (every path checked before any is read)."""
    found = {}
    for source in sources:
        if not source.isprintable():  # a newline would break the one line each of its refusals is, a NUL the path
            raise UsageError(f"{source!r}: a path with a control character (a newline, a NUL); rename it")
        path = Path(source)
        found[source] = path / RESULTS_FILE if path.is_dir() else path
        if not found[source].is_file():
            raise UsageError(f"{source}: no results.json there; give engines' run folders or their results.json files")
    return found


def _buckets_of_files(found: dict[str, Path]) -> BucketsBeside:
    """The second pass over files: each engine's buckets.parquet, beside its results.json."""

    def read(sources: Sequence[str]) -> Iterator[Path]:
        for source in sources:
            yield found[source].parent / BUCKETS_FILE

    return read


def _buckets_of_container(given: dict[str, Any]) -> BucketsBeside:
    """The second pass over a container: each engine's buckets.parquet, downloaded ahead as results.json were."""
    container = given["from_container"]

    def read(sources: Sequence[str]) -> Iterator[bytes]:
        yield from download_buckets(
            container,
            [source.removeprefix(f"{container}/") for source in sources],
            connection_string=given["connection_string"],
            account_url=given["account_url"],
            timeout=given["timeout"],
        )

    return read


def _told(engines: Iterable[tuple[str, str | Path]], progress: Progress) -> Iterator[tuple[str, str | Path]]:
    """The engines as they are taken: each one before the next counted as merged."""
    for engine in engines:
        yield engine
        progress.advance()


def merge_command(ns: argparse.Namespace) -> int:
    given = {opt.dest: opt.value(ns) for opt in MERGE_OPTIONS}
    container, run_id = given["from_container"], given["run_id"]
    if container:
        if given["sources"]:
            raise UsageError("merge: give engines' results (SOURCE…) or --from-container, not both")
        if not run_id:
            raise UsageError(f"--from-container {container}: needs --run-id ID, the run whose engines uploaded there")
        connection = {name: given[name] for name in ("connection_string", "account_url", "timeout")}
        names = results_blobs(container, run_id, **connection)
        if not names:
            raise UsageError(
                f"--from-container {container} --run-id {run_id}: no engine's results.json under {container}/{run_id}/ "
                f"(engines put them there with --upload {container} --run-id {run_id})"
            )
        engines: Iterable[tuple[str, str | Path]] = download_results(container, names, **connection)
        count, beside = len(names), _buckets_of_container(given)
    else:
        found = _results_files(given["sources"])
        engines, count, beside = found.items(), len(found), _buckets_of_files(found)
    workers = merge_workers(count)
    with Progress("merge", count, "engines") as progress:
        engines = _told(engines, progress)
        if workers > 1:
            merged = merge_apart(engines, beside, workers, run_id=run_id)
        else:
            merged = merge(((source, read_results(source, read)) for source, read in engines), beside, run_id=run_id)
    out = check_out(given["out"] or str(Path("reports") / merged.run.id / "merged"), overwrite=given["overwrite"])
    report = not given["no_report"]
    if not wrapup.finish(merged, out, target=None, started=time.time(), report=report):
        return 1
    code, messages = exit_code(merged, checks_for(given["fail_on"]))
    engines = ", ".join(share["engine"] for share in merged.engines)
    lines = [f"Merged {len(merged.engines)} engines of run {merged.run.id} ({engines})."]
    lines.append(wrapup.written_line(out, report))
    if given["junit"] and junit.write(given["junit"], [junit.suite(merged, given["fail_on"])]):
        lines.append(f"JUnit: {given['junit']}")
    lines += wrapup.console_lines(merged)
    lines += [f"  FAILED {message}" for message in messages]
    print("\n".join(lines), flush=True)
    return code
