"""The client request ids of the last few minutes of records, to tell an operation's first attempt from its retries
(the SDKs keep one id across an operation's retries): each id held as a 64-bit hash with the last time it was seen,
in one sorted array, so a block's lookup is one binary search of its distinct ids, sorted. Arrow's ``is_in`` against
the window's ids as strings built a hash set of some 900,000 of them for every block (2.1 s of a million records'
15 s); a sorted run a block, searched run by run, took 16 s of ten million records' 80.

Two ids of one window taken for one another need 64 equal bits: among ten million, about one chance in 300,000.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["RecentIds"]


class RecentIds:
    """Ids seen within ``window`` seconds before the newest record of the last block (``first``)."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._ids = np.zeros(0, dtype=np.int64)  # sorted hashes of the window's ids
        self._last = np.zeros(0, dtype=np.float64)  # each one's last time
        self._cutoff = -np.inf

    def first(self, ids: pa.ChunkedArray | pa.Array, times: np.ndarray) -> np.ndarray:
        """Whether each record is its operation's first attempt: the first of its id in this block, and not seen in
        the window before it (a record without an id is an operation of its own)."""
        listed = ids.to_pylist()
        given = np.fromiter(map(bool, listed), dtype=bool, count=len(times))
        keys = np.fromiter(map(hash, listed), dtype=np.int64, count=len(times))
        order = np.argsort(keys, kind="stable")  # by id, each id's records in their order
        ranked = keys[order]
        starts = np.flatnonzero(np.append(True, ranked[1:] != ranked[:-1]))
        distinct = ranked[starts]  # sorted: a binary search of sorted needles stays in cache
        at = np.searchsorted(self._ids, distinct)
        held = at < len(self._ids)
        held[held] = self._ids[at[held]] == distinct[held]
        before = held.copy()
        before[held] = self._last[at[held]] >= self._cutoff
        opening = np.zeros(len(times), dtype=bool)
        opening[order[starts[~before]]] = True  # an id's first record in the block, when not seen before it
        named = given[order[starts]]
        self._cutoff = float(times.max()) - self.window  # the next block's
        self._keep(at, held & named, ~held & named, distinct, np.maximum.reduceat(times[order], starts))
        return ~given | opening

    def _keep(self, at: np.ndarray, held: np.ndarray, new: np.ndarray, distinct: np.ndarray, last: np.ndarray) -> None:
        """This block's ids with their last times: the held ones' moved on, the new ones put in their places (one
        pass over the window's), and those the window has left behind let go of."""
        self._last[at[held]] = np.maximum(self._last[at[held]], last[held])
        ids, times = np.insert(self._ids, at[new], distinct[new]), np.insert(self._last, at[new], last[new])
        alive = times >= self._cutoff
        self._ids, self._last = (ids, times) if alive.all() else (ids[alive], times[alive])
