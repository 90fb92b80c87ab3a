"""Engines' buckets read a batch at a time, never summed into arrays: what ``loadtest merge`` adds for shards of request
logs whose span is past a day (``rolled_frame`` reads them twice, a batch at a time, and bins all but each peak's
seconds). ``BucketSum``'s arrays hold a cell a second for every kept partition and op class: a month of them would
not fit, and the shards of a month's logs hold rows in few of those cells.

Each batch is checked as ``BucketSum`` checks an engine's buckets (whole numbers, text, op classes by name, the
seconds within the engines' clocks, the tallies JSON objects of whole numbers) and each file holds the rows its
results.json says; a wrong one is a ``UsageError`` naming the engine and the file, raised while the merge reads,
before anything is written.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..counting.bucket_frame import COLUMNS, KEYS, TALLIES, column_of, tally_of
from ..counting.buckets import COUNTERS
from ..exit_codes import UsageError
from ..outputs import BUCKETS_FILE
from ..service.operations import OpClass
from .bucket_sum import SLACK_S

__all__ = ["BATCH_ROWS", "BucketStream"]

BATCH_ROWS = 250_000  # rows a batch: some 30 MB as a frame


class BucketStream:
    """The engines' buckets as sources read afresh each pass (``frames``), over the seconds ``first`` to ``last``."""

    def __init__(self, first: int, last: int) -> None:
        self.bounds = (first - SLACK_S, last + SLACK_S)
        self._sources: list[tuple[str, Path | bytes, int | None]] = []

    def add(self, source: str, given: Path | bytes, rows: int | None = None) -> None:
        """An engine's buckets.parquet (its file or its bytes), to hold ``rows`` rows where its results.json says."""
        self._sources.append((source, given, rows))

    @property
    def rows(self) -> int:
        return sum(rows or 0 for _, _, rows in self._sources)

    def frames(self) -> Iterator[pd.DataFrame]:
        """Every engine's buckets, a checked batch at a time (``bucket_frame``'s columns)."""
        for source, given, rows in self._sources:
            read = 0
            try:
                for batch in _batches(given):
                    frame = self._checked(batch)
                    read += len(frame)
                    yield frame
            except ValueError as err:
                raise UsageError(f"{source}: {BUCKETS_FILE}: {err}") from None
            if rows is not None and read != rows:
                raise UsageError(f"{source}: {BUCKETS_FILE} holds {read:,} rows, and results.json says {rows:,}")

    def _checked(self, table: pa.Table) -> pd.DataFrame:
        columns: dict[str, object] = {}
        seconds = column_of(table, KEYS[0], "whole").to_numpy()
        if len(seconds) and (seconds.min() < self.bounds[0] or seconds.max() > self.bounds[1]):
            wrong = int(seconds.min()) if seconds.min() < self.bounds[0] else int(seconds.max())
            first, last = self.bounds[0] + SLACK_S, self.bounds[1] - SLACK_S
            raise ValueError(f"second {wrong}: more than {SLACK_S} s outside the engines' clocks ({first} to {last})")
        columns[KEYS[0]] = seconds
        for name in KEYS[1:]:
            columns[name] = np.asarray(column_of(table, name, "text").to_pylist(), dtype=object)
        wrong = set(columns[KEYS[2]]) - {str(op) for op in OpClass}  # type: ignore[arg-type]
        if wrong:
            raise ValueError(f"op class {min(wrong)!r}: not one of {', '.join(str(op) for op in OpClass)}")
        for name in (*COUNTERS, "longest_ms"):
            columns[name] = column_of(table, name, "whole").to_numpy()
        for name in TALLIES:
            texts = np.asarray(column_of(table, name, "text").to_pylist(), dtype=object)
            for text in set(texts.tolist()):
                if text:
                    tally_of(name, text)
            columns[name] = texts
        return pd.DataFrame(columns)


def _batches(given: Path | bytes) -> Iterator[pa.Table]:
    """A buckets.parquet's rows, ``BATCH_ROWS`` at a time; a ``ValueError`` if it is no such file."""
    try:
        file = pq.ParquetFile(io.BytesIO(given) if isinstance(given, bytes) else given)
        missing = [name for name in COLUMNS if name not in file.schema_arrow.names]
        if missing:
            raise ValueError(f"no column {missing[0]!r} (the buckets have {', '.join(COLUMNS)})")
        for batch in file.iter_batches(batch_size=BATCH_ROWS, columns=list(COLUMNS)):
            yield pa.Table.from_batches([batch])
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"not a readable Parquet file ({err})") from None
