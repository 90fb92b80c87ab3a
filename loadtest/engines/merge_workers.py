"""``loadtest merge``'s costly parts in worker processes, one a core: reading and checking each engine's results.json
and adding its latency histograms (decoding some 2,600 of an engine-hour is most of what an engine costs), then
reading and adding its buckets. The engines go to the workers in turn, and their answers come back in the engines'
order: the merging process takes each engine's rest (checks, sketches, samples, share) as it would have read it, so
what is refused, and in what words, does not change; each worker's sums are added once every engine is in.

At most ``AHEAD`` engines a worker wait for it (the container's downloads or the files behind): memory grows with
the workers and the run's seconds and keys, not with the engines.
"""

from __future__ import annotations

import multiprocessing
import queue
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd

from ..counting.counts import HISTOGRAMS, RunCounts
from ..exit_codes import ToolError, UsageError
from ..results.form import Results
from .bucket_sum import BucketSum
from .engine_read import add_buckets, read_buckets, read_results, read_results_apart

__all__ = ["AHEAD", "MergeWorkers"]

AHEAD = 4  # engines handed to a worker before its first answer is read
_POLL_S = 1.0  # how often a wait for a worker's answer looks whether it is still alive


class MergeWorkers:
    """``count`` worker processes (started fresh, ``spawn``: nothing of this process's threads is copied); a context
    manager that stops them, or ends them if the merge stops early."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._inboxes = [context.Queue() for _ in range(count)]
        self._outboxes = [context.Queue() for _ in range(count)]
        self._workers = [
            context.Process(target=_serve, args=(inbox, outbox), name=f"merge-{i}", daemon=True)
            for i, (inbox, outbox) in enumerate(zip(self._inboxes, self._outboxes, strict=True))
        ]
        for worker in self._workers:
            worker.start()

    def __enter__(self) -> MergeWorkers:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        for inbox, worker in zip(self._inboxes, self._workers, strict=True):
            if kind is None and worker.is_alive():
                inbox.put(("stop",))
            else:
                worker.kill()
        for worker in self._workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.kill()
                worker.join()

    def results(self, engines: Iterable[tuple[str, str | Path]]) -> Iterator[tuple[str, Results, str]]:
        """Each engine's results in the order given, its latency histograms taken out (added in its worker):
        (source, results, what did not decode, or "")."""
        for source, answer in self._in_order("results", ((source, given) for source, given in engines)):
            yield source, *answer

    def histograms(self) -> Iterator[dict[str, list[list]]]:
        """Each worker's sum of the histograms it took, in HdrHistogram's encoding (``RunCounts.histograms``)."""
        for i in range(len(self._workers)):
            self._inboxes[i].put(("histograms",))
        return (self._answer(i) for i in range(len(self._workers)))

    def bucket_sums(
        self, keep: list[str], first: int, last: int, engines: Iterable[tuple[str, Path | bytes, int]]
    ) -> Iterator[tuple[pd.DataFrame, Counter[tuple[int, str]]]]:
        """Each engine's buckets added in a worker (``BucketSum`` over ``keep``, seconds ``first`` to ``last``): each
        worker's sum as a frame, and its folded entities, once every engine is in."""
        for inbox in self._inboxes:
            inbox.put(("sum", keep, first, last))
        for _ in self._in_order("buckets", engines):
            pass
        for inbox in self._inboxes:
            inbox.put(("summed",))
        return (self._answer(i) for i in range(len(self._workers)))

    def _in_order(self, kind: str, items: Iterable[tuple[Any, ...]]) -> Iterator[tuple[str, Any]]:
        """Each item handed to the workers in turn, ``AHEAD`` each at most, and their answers in the items' order:
        (source, answer); a refusal raised as the engine's ``UsageError``."""
        pending: deque[tuple[str, int]] = deque()
        count = len(self._workers)
        for k, item in enumerate(items):
            self._inboxes[k % count].put((kind, *item))
            pending.append((item[0], k % count))
            if len(pending) >= count * AHEAD:
                yield self._taken(*pending.popleft())
        while pending:
            yield self._taken(*pending.popleft())

    def _taken(self, source: str, worker: int) -> tuple[str, Any]:
        refused, answer = self._answer(worker)
        if refused:
            raise UsageError(refused)
        return source, answer

    def _answer(self, worker: int) -> Any:
        process = self._workers[worker]
        while True:
            try:
                return self._outboxes[worker].get(timeout=_POLL_S)
            except queue.Empty:
                if not process.is_alive():
                    raise ToolError(
                        f"loadtest merge: its worker process {process.name} ended (exit {process.exitcode}) before it "
                        "answered; rerun the merge (out of memory? see the system's log)"
                    ) from None


def _serve(inbox: multiprocessing.Queue, outbox: multiprocessing.Queue) -> None:
    """A worker: the histograms of the engines it is given added into one count, their buckets into one sum."""
    counts, sums = RunCounts(), None
    try:
        while (message := inbox.get())[0] != "stop":
            kind, *args = message
            if kind == "results":
                outbox.put(_refused(_results, counts, *args))
            elif kind == "histograms":
                outbox.put(counts.histograms())
            elif kind == "sum":
                sums = BucketSum(*args)
            elif kind == "buckets":
                outbox.put(_refused(_buckets, sums, *args))
            elif kind == "summed":
                assert sums is not None
                outbox.put((sums.frame(), sums.ranges))
    finally:
        counts.close()


def _refused(work: Any, *args: Any) -> tuple[str, Any]:
    """(what refused the engine, or "", the work's answer)."""
    try:
        return "", work(*args)
    except UsageError as err:
        return str(err), None


def _results(counts: RunCounts, source: str, given: str | Path) -> tuple[Results, str]:
    """An engine's results without its latency histograms, which go into ``counts``; and what of them did not
    decode, if any (the merging process refuses the engine once its checks have passed, as in one process)."""
    results, histograms = read_results_apart(source, given)
    snapshot = results.mergeable.get("metrics", {})
    histograms |= {name: snapshot[name] for name in HISTOGRAMS if snapshot.get(name)}  # a count read whole
    snapshot.update(dict.fromkeys(HISTOGRAMS, []))
    try:
        counts.merge_histograms(histograms)
    except Exception as err:  # noqa: BLE001 -- one that read past unchecked: the reader's line names it, if it can
        read_results(source, given)
        return results, str(err)
    return results, ""


def _buckets(sums: BucketSum | None, source: str, given: Path | bytes, rows: int) -> None:
    assert sums is not None
    add_buckets(sums, source, read_buckets(source, given), rows)
