"""The client request ids of the last few minutes of records, to tell an operation's first attempt from its retries
(the SDKs keep one id across an operation's retries): each id held as a 64-bit hash with the last time it was seen,
in one sorted run a block, so a block's lookup is a binary search per run. Arrow's ``is_in`` against the window's
ids as strings built a hash set of some 900,000 of them for every block (2.1 s of a million records' 15 s).

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
        self._runs: list[tuple[np.ndarray, np.ndarray, float]] = []  # (sorted hashes, each one's last time, latest)
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
        before = np.zeros(len(distinct), dtype=bool)
        for run, last, _ in self._runs:
            found = np.minimum(np.searchsorted(run, distinct), len(run) - 1)
            before |= (run[found] == distinct) & (last[found] >= self._cutoff)
        opening = np.zeros(len(times), dtype=bool)
        opening[order[starts[~before]]] = True  # an id's first record in the block, when not seen before it
        named = given[order[starts]]
        self._keep(distinct[named], np.maximum.reduceat(times[order], starts)[named], float(times.max()))
        return ~given | opening

    def _keep(self, keys: np.ndarray, last: np.ndarray, newest: float) -> None:
        """This block's ids (sorted, each with its last time), and the window moved to end at its newest record."""
        if len(keys):
            self._runs.append((keys, last, float(last.max())))
        self._cutoff = newest - self.window
        self._runs = [run for run in self._runs if run[2] >= self._cutoff]
