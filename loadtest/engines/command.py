"""``loadtest merge``: engines' results (folders, results.json files, or a blob container) into one run's outputs —
results.json, timeseries.csv and report.html — judged as one run, with ``--fail-on``'s exit code."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import pyarrow as pa

from .. import bucket_frame, wrapup
from ..exit_codes import UsageError
from ..findings.assess import checks_for, exit_code
from ..options.commands import MERGE_OPTIONS
from ..outputs import BUCKETS_FILE, REPORT_FILE, RESULTS_FILE, check_out
from ..results import Results
from .blobs import download_buckets, download_results
from .merge import BucketsBeside, merge

__all__ = ["merge_command"]


def _read(source: str, text: str) -> tuple[str, Results]:
    try:
        return source, Results.from_json(text)
    except ValueError as err:  # every field checked against its type; JSON errors are ValueErrors too
        raise UsageError(f"{source}: not a partition-stress results.json: {err}") from None


def _results_files(sources: list[str]) -> dict[str, Path]:
    """Each engine's results.json, by its source (every path checked before any is read)."""
    found = {}
    for source in sources:
        path = Path(source)
        found[source] = path / RESULTS_FILE if path.is_dir() else path
        if not found[source].is_file():
            raise UsageError(f"{source}: no results.json there; give engines' run folders or their results.json files")
    return found


def _from_files(found: dict[str, Path]) -> Iterator[tuple[str, Results]]:
    """Each engine's results, read as the merge takes it; one whose results.json names its buckets' file must have it
    beside (said as it is read, before the sum)."""
    for source, path in found.items():
        read = _read(source, path.read_text(encoding="utf-8", errors="replace"))
        named = isinstance(read[1].mergeable.get("metrics", {}).get("buckets"), dict)
        if named and not (path.parent / BUCKETS_FILE).is_file():
            raise UsageError(f"{source}: its buckets ({BUCKETS_FILE}) are not beside its results.json; copy its folder whole")
        yield read


def _buckets_of_files(found: dict[str, Path]) -> BucketsBeside:
    """The second pass over files: each engine's buckets.parquet, beside its results.json."""

    def read(sources: Sequence[str]) -> Iterator[pa.Table]:
        for source in sources:
            yield _buckets(source, found[source].parent / BUCKETS_FILE)

    return read


def _buckets_of_container(given: dict[str, Any]) -> BucketsBeside:
    """The second pass over a container: each engine's buckets.parquet, downloaded ahead as results.json were."""
    container = given["from_container"]

    def read(sources: Sequence[str]) -> Iterator[pa.Table]:
        blobs = download_buckets(
            container,
            [source.removeprefix(f"{container}/") for source in sources],
            connection_string=given["connection_string"],
            account_url=given["account_url"],
            timeout=given["timeout"],
        )
        for source, data in zip(sources, blobs, strict=True):
            yield _buckets(source, data)

    return read


def _buckets(source: str, data: Path | bytes) -> pa.Table:
    try:
        return bucket_frame.read_table(data)
    except ValueError as err:
        raise UsageError(f"{source}: {BUCKETS_FILE}: {err}") from None


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
        sources, beside = (_read(name, text) for name, text in chain([first], texts)), _buckets_of_container(given)
    else:
        found = _results_files(given["sources"])
        sources, beside = _from_files(found), _buckets_of_files(found)
    merged = merge(_of_run(sources, run_id), beside)
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
