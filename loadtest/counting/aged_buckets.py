"""The buckets of seconds behind a run's recent window, held as compressed columns so that a run of any length holds
its counts in bounded memory: exact still (every counter of every second, partition and op class kept), but some
10 bytes a row instead of some 400 for a ``Bucket`` and its key.

Aged buckets gather in plain lists until ``CHUNK_ROWS`` of them are in, then go into one Parquet chunk (zstd);
reading them back (the summary, once) decodes the chunks one at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import pandas as pd

from .bucket_frame import decode, encode, frame_of
from .buckets import Bucket, BucketKey

__all__ = ["CHUNK_ROWS", "AgedBuckets"]

CHUNK_ROWS = 5_000  # about a minute of 50 keys' GET and PUT at 200 operations/s: the buckets waiting as objects stay few


class AgedBuckets:
    """Buckets put away: Parquet chunks, and the rows not yet encoded."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._frames: list[pd.DataFrame] = []  # given whole (the engines' sum): read once, never encoded
        self._sources: list[Callable[[], Iterable[pd.DataFrame]]] = []  # read afresh each time (engines' files)
        self._pending: list[tuple[BucketKey, Bucket]] = []
        self.rows = 0

    def add(self, key: BucketKey, bucket: Bucket) -> None:
        """Put a bucket away (a key already put away is added to it when read back)."""
        self._pending.append((key, bucket))
        self.rows += 1
        if len(self._pending) >= CHUNK_ROWS:
            self._chunks.append(encode(frame_of(self._pending)))
            self._pending = []

    def put_away(self, frame: pd.DataFrame) -> None:
        """Buckets made as a frame (``bucket_frame``'s columns, a key once), put away compressed as they are."""
        self._chunks.append(encode(frame))
        self.rows += len(frame)

    def add_frame(self, frame: pd.DataFrame) -> None:
        """Buckets given as a frame (``bucket_frame``'s columns), kept as they are."""
        self._frames.append(frame)
        self.rows += len(frame)

    def add_source(self, frames: Callable[[], Iterable[pd.DataFrame]], rows: int) -> None:
        """Buckets held elsewhere (engines' files over a long span), read a frame at a time each time they are read."""
        self._sources.append(frames)
        self.rows += rows

    def frames(self) -> Iterator[pd.DataFrame]:
        """Every chunk decoded, one at a time, then the frames given whole, the sources' and the pending rows."""
        for chunk in self._chunks:
            yield decode(chunk)
        yield from self._frames
        for source in self._sources:
            yield from source()
        if self._pending:
            yield frame_of(self._pending)

    @property
    def encoded_bytes(self) -> int:
        return sum(len(chunk) for chunk in self._chunks)

    def clear(self) -> None:
        self._chunks.clear()
        self._frames.clear()
        self._sources.clear()
        self._pending = []
        self.rows = 0
