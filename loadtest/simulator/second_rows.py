"""A simulation's seconds as a run's bucket rows, column by column: each second's counts per tracked key and op class
(and the rest as ``OTHER``) made whole with the rounding carried into the next second, gathered as columns and put
away compressed every ``CHUNK_S`` seconds (``bucket_frame``'s form), so a day over 50 tracked keys holds some tens of
megabytes, where a ``Bucket`` object a row held gigabytes (8.4 GB for a day at 10x), and takes no Python loop per row.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..counting.bucket_frame import COLUMNS
from ..counting.buckets import COUNTERS, OTHER
from ..counting.counts import RunCounts

__all__ = ["CHUNK_S", "COUNTED", "SecondRows", "WITHIN"]

CHUNK_S = 600  # seconds gathered as columns before they are put away compressed
#: What each second counts per stream and key, as a run's buckets do (``buckets.COUNTERS``), and of the throttled, the
#: account's.
COUNTED = ("requests", "failures", "entities", "offered", "attempts", "throttled", "backoff_ms", "scheduled", "throttled_account")
WITHIN = {"requests": "failures", "attempts": "throttled"}  # a count and the part of it it holds
_AT = {name: i for i, name in enumerate(COUNTED)}
_WITHIN = [(_AT[whole], _AT[part]) for whole, part in WITHIN.items()]


class SecondRows:
    """Each second's rows, made whole (``add``), into ``counts``' put-away buckets (``flush``)."""

    def __init__(self, counts: RunCounts, keys: list[str], tracked: list[int], op_classes: list[str], timeout_share: float):
        self.counts, self.timeout_share = counts, timeout_share
        self.tracked = np.asarray(tracked, dtype=np.int64)
        self.partitions = np.array([*(keys[i] for i in tracked), OTHER], dtype=object)
        # rounding carried per row (each tracked key, then OTHER) and counter, per op class
        self.carry = {op_class: np.zeros((len(tracked) + 1, len(COUNTED))) for op_class in op_classes}
        self._parts: list[tuple[int, str, np.ndarray, np.ndarray]] = []  # (second, op class, rows, whole counts)
        self._seconds = 0

    def add(self, second: int, op_class: str, keyed: np.ndarray, everything: np.ndarray) -> None:
        """One second of one op class: ``keyed`` the counts per key of the streams whose keys are the demand's own
        ([counter, key]), ``everything`` each counter's total over every key and stream, a group's keys each counted."""
        figures = keyed[:, self.tracked].T  # [tracked key, counter]
        rest = everything - figures.sum(axis=0)
        table = np.vstack([figures, rest])
        attempts, entities = table[:, _AT["attempts"]], table[:, _AT["entities"]]
        kept = (attempts > 0) | (entities > 0)  # a key scans read past their first: its entities
        kept[-1] = attempts[-1] > 1e-6 or entities[-1] > 1e-6
        if not kept.any():
            return
        split = table[kept]
        for whole, part in _WITHIN:  # a count that holds another: its part and the rest rounded apart, never less
            split[:, whole] -= split[:, part]
        carried = split + self.carry[op_class][kept]
        whole = np.round(carried)  # half to even, as Python's round
        self.carry[op_class][kept] = carried - whole
        for at, part in _WITHIN:
            whole[:, at] += whole[:, part]
        self._parts.append((second, op_class, np.flatnonzero(kept), whole.astype(np.int64)))

    def end_of_second(self) -> None:
        self._seconds += 1
        if self._seconds % CHUNK_S == 0:
            self.flush()

    def flush(self) -> None:
        """The rows gathered, put away in the counts as a compressed chunk."""
        if not self._parts:
            return
        rows = np.concatenate([at for _, _, at, _ in self._parts])
        whole = np.concatenate([w for _, _, _, w in self._parts])
        columns: dict[str, object] = {
            "second": np.repeat([s for s, _, _, _ in self._parts], [len(at) for _, _, at, _ in self._parts]),
            "partition": self.partitions[rows],
            "op_class": np.repeat(
                np.array([c for _, c, _, _ in self._parts], dtype=object), [len(a) for _, _, a, _ in self._parts]
            ),
        }
        for name in (*COUNTERS, "longest_ms"):
            columns[name] = whole[:, _AT[name]] if name in _AT else np.zeros(len(whole), dtype=np.int64)
        columns["errors"], columns["throttled_by"] = self._tallies(whole)
        self.counts.aged.put_away(pd.DataFrame({name: columns[name] for name in COLUMNS}))
        self._parts = []

    def _tallies(self, whole: np.ndarray) -> tuple[list[str], list[str]]:
        """Failures by error code and throttled attempts by reason, as the emulator answers them (``timeout_share`` as
        500 OperationTimedOut, the rest as 503 ServerBusy for the account or the partition): JSON text, "" if none."""
        share = self.timeout_share
        errors, reasons = [""] * len(whole), [""] * len(whole)
        failures, throttled, by_account = (whole[:, _AT[n]] for n in ("failures", "throttled", "throttled_account"))
        for i in np.flatnonzero(throttled):
            timeout = round(int(throttled[i]) * share)
            account = min(int(throttled[i]) - timeout, round(int(by_account[i]) * (1 - share)))
            said = {"timeout": timeout, "account": account, "partition": int(throttled[i]) - timeout - account}
            reasons[i] = json.dumps({k: n for k, n in said.items() if n}, separators=(",", ":"))
        for i in np.flatnonzero(failures):
            timed_out = round(int(failures[i]) * share)
            said = {"ServerBusy": int(failures[i]) - timed_out, "OperationTimedOut": timed_out}
            errors[i] = json.dumps({k: n for k, n in said.items() if n}, separators=(",", ":"))
        return errors, reasons
