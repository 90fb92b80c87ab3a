"""One engine's files read for ``loadtest merge``, each failure one ``UsageError`` naming the engine: its
results.json (a text downloaded from a container, or a file whose buckets.parquet must lie beside it), and its
buckets added to the sum. The merge reads them in its own process or in its workers (``merge_workers``) alike, so an
engine is refused in the same words either way."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from .. import bucket_frame
from ..exit_codes import UsageError
from ..outputs import BUCKETS_FILE
from ..results import Results
from .bucket_sum import BucketSum

__all__ = ["add_buckets", "read_buckets", "read_results", "undecoded"]


def read_results(source: str, given: str | Path) -> Results:
    """An engine's results (``given``: results.json's text, or its file); a file that names its buckets' file must
    have it beside."""
    text = given.read_text(encoding="utf-8", errors="replace") if isinstance(given, Path) else given
    try:
        results = Results.from_json(text)
    except ValueError as err:  # every field checked against its type; JSON errors are ValueErrors too
        raise UsageError(f"{source}: not a partition-stress results.json: {err}") from None
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
