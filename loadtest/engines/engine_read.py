"""One engine's files read for ``loadtest merge``, each failure one ``UsageError`` naming the engine: its
results.json (a text downloaded from a container, or a file whose buckets.parquet must lie beside it), and its
buckets added to the sum. The merge reads them in its own process or in its workers (``merge_workers``) alike, so an
engine is refused in the same words either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from ..counting import bucket_frame
from ..counting.counts import HISTOGRAMS
from ..exit_codes import UsageError
from ..options.rules import read_name
from ..outputs import BUCKETS_FILE
from ..results.form import Results
from ..typed.reader import loads
from .bucket_sum import BucketSum

__all__ = ["add_buckets", "read_buckets", "read_results", "read_results_apart", "undecoded"]


def _text(given: str | Path) -> str:
    return given.read_text(encoding="utf-8", errors="replace") if isinstance(given, Path) else given


def read_results(source: str, given: str | Path) -> Results:
    """An engine's results (``given``: results.json's text, or its file); a file that names its buckets' file must
    have it beside."""
    try:
        results = Results.from_json(_text(given))
    except ValueError as err:  # every field checked against its type; JSON errors are ValueErrors too
        raise UsageError(f"{source}: not a partition-stress results.json: {err}") from None
    return _beside(source, given, results)


def read_results_apart(source: str, given: str | Path) -> tuple[Results, dict[str, Any]]:
    """An engine's results, its latency histograms taken out unchecked (``HISTOGRAMS``; an empty list each in the
    results): for a reader that adds them at once, which checks each whole (``histograms.add_into``). Checking their
    headers on read as well was a third of reading an engine-hour. Such a reader calls ``read_results`` for the line
    that names what is wrong where an add fails; a count of another form is read whole, its histograms in it."""
    try:
        data = loads(_text(given))  # nesting past Python's stack: a ValueError, read whole for its line
        metrics = data["mergeable"]["metrics"]
        histograms = {name: metrics[name] for name in HISTOGRAMS if isinstance(metrics.get(name), list)}
        metrics.update(dict.fromkeys(histograms, []))
        results = Results.from_dict(data)
    except (ValueError, TypeError, KeyError):  # not JSON, not a count, a field that is wrong: named as read whole
        return read_results(source, given), {}
    return _beside(source, given, results), histograms


def _beside(source: str, given: str | Path, results: Results) -> Results:
    where = str(given) if isinstance(given, Path) else source
    read_name(f"{where}: run.id", results.run.id)  # the merge's folder and server-logs.kql: a name, never a path
    if "engine" in results.mergeable:
        read_name(f"{where}: mergeable.engine", results.mergeable["engine"])
    named = isinstance(results.mergeable.get("metrics", {}).get("buckets"), dict)
    if isinstance(given, Path) and named and not (given.parent / BUCKETS_FILE).is_file():
        raise UsageError(f"{source}: its buckets ({BUCKETS_FILE}) are not beside its results.json; copy its folder whole")
    return results


def undecoded(source: str, err: ValueError | str) -> UsageError:
    """An engine whose latency histograms do not decode as they are added."""
    return UsageError(f"{source}: not a partition-stress results.json: results.mergeable.metrics: {err}")


def read_buckets(source: str, given: Path | bytes) -> pa.Table:
    """An engine's buckets.parquet (its file, or its bytes downloaded)."""
    try:
        return bucket_frame.read_table(given)
    except ValueError as err:
        raise UsageError(f"{source}: {BUCKETS_FILE}: {err}") from None


def add_buckets(sums: BucketSum, source: str, table: pa.Table, rows: int | None = None) -> None:
    """An engine's buckets into the sum: as many rows as its results.json says (``rows``, where it names their file)."""
    if rows is not None and table.num_rows != rows:
        raise UsageError(f"{source}: {BUCKETS_FILE} holds {table.num_rows:,} rows, and results.json says {rows:,}")
    try:
        sums.add(table)
    except ValueError as err:
        raise UsageError(f"{source}: {BUCKETS_FILE}: {err}") from None
