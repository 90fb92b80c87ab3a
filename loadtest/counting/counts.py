"""What a run counted, per second, partition and op class: the buckets, the latency histograms and the key sketches,
with the operations that add, hand over and compact them. Plain counts, no Locust: the request listener
(``request_listener.PartitionMetrics``) fills them during a run, ``loadtest merge`` adds the engines' and the simulator its
own, and ``summary.build`` reads them.

Buckets are keyed by (second, partition, op_class); latency goes into one HDR histogram per
(second, op_class) (microseconds, 2 significant digits), not Locust's rounded buckets; per minute once the
second is ten minutes old (``latency``), so that a run of any length holds them in bounded memory.

Many keys, bounded memory: a frequent-items sketch (Apache DataSketches) follows the heaviest
PartitionKeys and an HLL sketch estimates how many distinct ones the run touched. Seconds
older than ``COMPACT_AFTER_S`` keep exact buckets only for the top ``TOP_K`` keys of the moment
they aged (each bucket is judged once); the rest fold into one ``OTHER`` bucket per second, and
the summary folds again with the run's final top keys. A key hot from the start is never
folded, so its counts stay exact; one that joined the top late lacks its folded seconds, and is ``partial`` (its peak
and means at least what they say); its totals are whole, as every key's folded counts are summed (``folded_totals``).
Buckets more than ``AGED_AFTER_S`` behind the newest second are put away as compressed columns (``aged_buckets``):
exact still, and a day's soak holds them in bounded memory; their partitions' peaks and throttled attempts stay at
hand for the live view (``aged_peaks``).

A worker hands its counts to the master with ``drain`` (and starts afresh, so nothing is
counted twice); the master adds them with ``merge``. When that happens is ``distributed``'s job.
An engine's whole count (``snapshot``) goes into its results.json; ``loadtest merge`` adds the
engines' with the same ``merge``.
"""

from __future__ import annotations

import base64
import copy
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import datasketches as ds
import pandas as pd
from hdrh.histogram import HdrHistogram

from .aged_buckets import AgedBuckets
from .aged_peaks import AgedPeaks
from .bucket_frame import frame_of, summed, to_buckets
from .buckets import GROUPS, OTHER, Bucket, BucketKey, fold
from .folded_totals import FoldedTotals
from .histograms import add_into, max_ms, ms_at, new_histogram
from .key_edges import KeyEdges
from .latency import Latency

__all__ = [
    "AGED_AFTER_S",
    "COMPACT_AFTER_S",
    "HISTOGRAMS",
    "RunCounts",
    "SKETCH_LG_K",
    "TOP_K",
    "max_ms",
    "ms_at",
    "new_histogram",
]

TOP_K = 50  # PartitionKeys kept exactly, per second
#: A key with this share of a second's entities (and ``HOT_ENTITIES`` or more) is hot in it: from its judged second on
#: it is counted exactly whatever the cumulative top holds (a key hot for a minute of a day), so what is kept grows
#: with the keys that were ever hot, never with all keys (at most 1 / HOT_SHARE of them in any one second).
HOT_SHARE = 1 / TOP_K
HOT_ENTITIES = 10
COMPACT_AFTER_S = 5  # seconds a bucket stays exact whatever its key, for late merges from workers
SKETCH_LG_K = 12  # frequent items: up to 3 * 2**12 / 4 tracked; hll: ~1.6 % error
#: Seconds a bucket stays an object behind the newest second (the live view's and a ceiling step's, as latency keeps
#: its seconds apart); older ones are put away as columns.
AGED_AFTER_S = 120  # seconds kept as buckets behind the newest one: the live view's chart (and its peaks, with aged_peaks)
#: A snapshot's latency histograms, by key: what ``merge_histograms`` adds.
HISTOGRAMS = ("latency", "latency_minutes", "first_attempt", "corrected", "corrected_minutes")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


class RunCounts:
    """What table operations did, per second, partition and op class, and the run's clock."""

    def __init__(self, clock: Callable[[], float] = time.time, *, live: bool = True) -> None:
        self.clock = clock  # seconds since the epoch; tests pass their own
        self.buckets: dict[BucketKey, Bucket] = {}
        self.latency = Latency()  # per second and op class (per minute once aged: ``latency``)
        self.first_attempt: dict[str, HdrHistogram] = {}  # per op class: the first attempt's latency
        self.corrected = Latency()  # per second and op class, open loop: completion - due
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self.distinct = ds.hll_union(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        self.folded_before = 0  # seconds before this are compacted
        self._top: frozenset[str] = frozenset()
        self.hot: set[str] = set()  # keys hot in some second (``HOT_SHARE``): kept exactly with the top ones
        self._fresh: list[BucketKey] = []  # buckets made since ``compact`` last looked: the only ones it reads
        self._kept: deque[BucketKey] = deque()  # buckets ``compact`` kept, oldest first: to be put away as they age
        self.aged = AgedBuckets()  # seconds more than ``AGED_AFTER_S`` behind the newest, as columns
        self.aged_peaks = AgedPeaks()  # their partitions' peaks and throttled attempts, for the live view
        self.aged_totals: dict[tuple[str, str], Bucket] = {}  # and their counts summed per partition and op class
        self.live = live  # a run's, watched; records read afterwards (``loadtest traffic``) have no live view to feed
        self.ranges: Counter[tuple[int, str]] = Counter()  # (second, first key character) -> folded entities
        self.edges = KeyEdges()  # the ends of the key order, each second's read before its untracked keys fold
        self.folded = FoldedTotals()  # each key's counts folded into OTHER: its totals whole, its seconds ``partial``
        self._late: dict[BucketKey, Bucket] = {}  # reports for seconds compacted already, of keys not kept apart
        self.started: float | None = None
        self.steady_from: float | None = None
        self.stopped: float | None = None
        self.steady_until: float | None = None  # merged engines: when the first one stopped (the steady phase's end)

    def seen(self, partition: str, entities: int) -> None:
        """A partition an operation asked of: its weight among the heaviest keys, and one of the distinct ones."""
        self.heavy.update(partition, max(1, entities))
        self._distinct_here.update(partition)

    def _kept_now(self) -> frozenset[str]:
        """The keys kept apart now: the top ones and those hot in some second."""
        return self._top | frozenset(self.hot)

    def _settle_late(self) -> None:
        """Fold the late reports of keys not kept apart into ``OTHER`` (each key's counts summed, as ``compact``
        folds)."""
        late, self._late = self._late, {}
        for (second, partition, op_class), bucket in late.items():
            self._bucket(second, OTHER, op_class).add(bucket)
            self.folded.add(partition, op_class, bucket, self._kept_now)

    def frame(self) -> pd.DataFrame:
        """Every bucket, put away or not, as a frame with one row per key (``bucket_frame``), sorted by it."""
        return summed(pd.concat(list(self.frames()), ignore_index=True))

    def frames(self) -> Iterator[pd.DataFrame]:
        """Every bucket a frame at a time (``bucket_frame``'s columns; a key may repeat across them): those put away,
        decoded one at a time, then those held (what reads a long span a chunk at a time)."""
        self._settle_late()
        yield from self.aged.frames()
        yield frame_of(self.buckets.items())

    def between(self, first: int, last: int) -> dict[BucketKey, Bucket]:
        """The buckets of seconds ``first`` to ``last`` (a ceiling step's), put away or not."""
        self._settle_late()
        frames = [frame[(frame["second"] >= first) & (frame["second"] <= last)] for frame in self.aged.frames()]
        out = to_buckets(pd.concat(frames, ignore_index=True)) if frames else {}
        for key, bucket in self.buckets.items():
            if first <= key[0] <= last:
                out.setdefault(key, Bucket()).add(bucket)
        return out

    def add_frame(self, frame: pd.DataFrame) -> None:
        """Buckets counted elsewhere, as a frame (``bucket_frame``): the engines' sum, which ``loadtest merge`` adds
        column by column."""
        self.aged.add_frame(frame)

    def bucket(self, second: int, partition: str, op_class: str) -> Bucket:
        """One second's bucket of a partition and op class (made if new): what a reader of records counts into."""
        return self._bucket(second, partition, op_class)

    def _bucket(self, second: int, partition: str, op_class: str) -> Bucket:
        key = (second, partition, op_class)
        if second < self.folded_before and partition not in self._top and partition not in GROUPS:
            late = self._late.get(key)  # a late report for a compacted second: folded as it is settled
            if late is None:
                late = self._late[key] = Bucket()
            return late
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket()
            self._fresh.append(key)
        return bucket

    # --- a worker's counts, to the master ---------------------------------------------------

    def snapshot(self, *, buckets: bool = True) -> dict[str, Any]:
        """Everything counted, in the form ``merge`` adds (histograms and sketches in their libraries' own encodings),
        and the run's clock; nothing is reset (an engine's results.json carries it for ``loadtest merge``, its buckets
        apart: ``buckets=False`` leaves them out, for ``frame``)."""
        self._settle_late()
        distinct = ds.hll_union(SKETCH_LG_K)
        distinct.update(self.distinct.get_result())
        distinct.update(self._distinct_here)
        listed = []
        if buckets:
            listed = [[*key, bucket.to_dict()] for frame in self.aged.frames() for key, bucket in to_buckets(frame).items()]
            listed += [[*key, bucket.to_dict()] for key, bucket in self.buckets.items()]
        return {
            "buckets": listed,
            **self.histograms(),
            "heavy": _b64(self.heavy.serialize()),
            "distinct": _b64(distinct.get_result().serialize_compact()),
            "ranges": [[second, start, n] for (second, start), n in sorted(self.ranges.items())],
            "edges": self.edges.snapshot(),
            "hot": sorted(self.hot),
            "folded_totals": self.folded.snapshot(self._kept_now()),
            "clock": {"started": self.started, "steady_from": self.steady_from, "stopped": self.stopped},
        }

    def histograms(self) -> dict[str, list[list]]:
        """The latency histograms in HdrHistogram's encoding, under the snapshot's keys (``HISTOGRAMS``)."""
        return {
            **dict(zip(("latency", "latency_minutes"), self.latency.encoded(), strict=True)),
            "first_attempt": [[key, hist.encode().decode("ascii")] for key, hist in self.first_attempt.items()],
            **dict(zip(("corrected", "corrected_minutes"), self.corrected.encoded(), strict=True)),
        }

    def drain(self) -> dict[str, Any]:
        """Everything since the last drain, as a message; then start afresh (a worker)."""
        drained = self.snapshot()
        self._afresh()
        return drained

    def _afresh(self) -> None:
        """Drop what a drain handed over: the buckets, histograms, folded counts and this process's sketches."""
        self.buckets.clear()
        self._fresh.clear()
        self._kept.clear()
        self.aged.clear()
        self.aged_peaks.clear()
        self.aged_totals.clear()
        self.latency.clear()
        self.first_attempt.clear()
        self.corrected.clear()
        self.heavy = ds.frequent_strings_sketch(SKETCH_LG_K)
        self._distinct_here = ds.hll_sketch(SKETCH_LG_K)
        self.folded, self._late = FoldedTotals(), {}

    def let_go_of_history(self) -> None:
        """Drop what only the run's results read, once they are built: the latency histograms and the buckets put away
        as columns (ten minutes' are some 30 MB, which the report's drawing then stacked on). What the live view still
        shows of a stopped test stays: the last seconds' buckets, the aged peaks, the sketches."""
        self.latency.clear()
        self.first_attempt.clear()
        self.corrected.clear()
        self.aged.clear()

    def reset(self, started: float) -> None:
        """Count a new test from ``started``: nothing of the last one kept (a web UI runs several per process)."""
        self._afresh()
        self.distinct = ds.hll_union(SKETCH_LG_K)
        self.folded_before = 0
        self._top = frozenset()
        self.hot = set()
        self.ranges.clear()
        self.edges = KeyEdges()
        self.started, self.steady_from, self.stopped = started, None, None

    def merge(self, data: Mapping[str, Any] | None) -> None:
        """Add what a worker drained (on the master)."""
        if not data:
            return
        for second, partition, op_class, bucket in data["buckets"]:
            self._bucket(int(second), partition, op_class).merge(bucket)
        self.merge_histograms(data)
        self.heavy.merge(ds.frequent_strings_sketch.deserialize(base64.b64decode(data["heavy"])))
        self.distinct.update(ds.hll_sketch.deserialize(base64.b64decode(data["distinct"])))
        for second, start, entities in data.get("ranges", ()):
            self.ranges[(int(second), start)] += entities
        self.edges.merge(data.get("edges"))
        self.hot.update(data.get("hot", ()))
        self.folded.merge(data.get("folded_totals"), self._kept_now)
        self.folded.note(data.get("folded", ()))  # a count written before the folded counts were handed over

    def merge_histograms(self, data: Mapping[str, Any]) -> None:
        """Add the latency histograms of a snapshot (``HISTOGRAMS``): what ``loadtest merge``'s workers add apart, each
        its share of the engines; a ``ValueError`` if one does not decode."""
        for latency, name in ((self.latency, "latency"), (self.corrected, "corrected")):
            for second, op_class, encoded in data.get(name, ()):
                latency.add_encoded(int(second), op_class, encoded)
            for minute, op_class, encoded in data.get(f"{name}_minutes", ()):  # rolled up (older counts have none)
                latency.add_encoded(int(minute), op_class, encoded, minute=True)
        for op_class, encoded in data.get("first_attempt", ()):
            add_into(self.first_attempt.setdefault(op_class, new_histogram()), encoded)

    def close(self) -> None:
        """Free the sketches before the interpreter exits (nanobind reports objects still alive then)."""
        self.heavy = self.distinct = self._distinct_here = None  # type: ignore[assignment]

    # --- many keys ------------------------------------------------------------------------

    def final_totals(self) -> dict[tuple[str, str], Bucket]:
        """Per (partition, op class): the counts of every second folded already (``COMPACT_AFTER_S`` behind), put away
        or not. A folded second's buckets keep their keys (``OTHER``'s included); a later one's may still fold, so it
        waits: totals read this way only grow, as a cumulative metric must."""
        folded = [(key[1:], bucket) for key, bucket in list(self.buckets.items()) if key[0] < self.folded_before]
        totals: dict[tuple[str, str], Bucket] = {}
        for key, bucket in [*self.aged_totals.items(), *folded]:
            totals.setdefault(key, Bucket()).add(bucket)
        return totals

    def edges_now(self) -> KeyEdges:
        """The ends of the key order with the seconds not yet compacted read too (a copy: the counts stay as they are)."""
        edges = copy.deepcopy(self.edges)
        edges.add_buckets(item for item in self.buckets.items() if item[0][0] >= self.folded_before)
        return edges

    def top_partitions(self, k: int = TOP_K) -> list[str]:
        """The k heaviest PartitionKeys by entities (the sketch's estimates; exact below its capacity), then the keys
        that were hot in some second (``hot``)."""
        items = self.heavy.get_frequent_items(ds.frequent_items_error_type.NO_FALSE_NEGATIVES)
        top = [item[0] for item in sorted(items, key=lambda item: (-item[1], item[0]))[:k]]
        return top + sorted(self.hot.difference(top))

    def _heat(self, seconds: Mapping[int, Mapping[str, list[float]]]) -> None:
        """The keys hot in each judged second (what the key order read of it: each key's asked entities first), to
        ``hot``."""
        for cells in seconds.values():
            asked = Counter({key: cell[0] for key, cell in cells.items()})
            least = max(HOT_ENTITIES, HOT_SHARE * sum(asked.values()))
            self.hot.update(key for key, n in asked.most_common(TOP_K) if n >= least)

    def partial(self, partition: str) -> bool:
        """Whether a key's per-second counts lack seconds folded into the other partitions before it was kept apart (a
        key that became one of the hottest late): its peak and means are then at least what they say (its totals are
        whole where ``FoldedTotals.exact`` says so)."""
        return partition not in GROUPS and self.folded.partial(partition)

    def distinct_partitions(self) -> float:
        union = ds.hll_union(SKETCH_LG_K)
        union.update(self.distinct.get_result())
        union.update(self._distinct_here)
        return union.get_result().get_estimate()

    def compact(self, now: float | None = None) -> None:
        """Fold the buckets of seconds older than ``COMPACT_AFTER_S`` outside the top keys into ``OTHER``, put away those
        older than ``AGED_AFTER_S``, and roll the latency of seconds older than ``latency.PER_SECOND_FOR_S`` into their
        minutes."""
        newest = int(self.clock() if now is None else now)
        self.latency.roll_up(newest)
        self.corrected.roll_up(newest)
        self._put_away(newest - AGED_AFTER_S)
        cutoff = newest - COMPACT_AFTER_S
        self._settle_late()
        if cutoff <= self.folded_before:
            return
        # each bucket is judged once, as it ages, not the whole run's every second (that grew with the run's length)
        judged = [key for key in self._fresh if key[0] < cutoff]
        self._fresh = [key for key in self._fresh if key[0] >= cutoff]
        self._heat(self.edges.add_buckets((key, self.buckets[key]) for key in judged if key in self.buckets))
        self._top = frozenset(self.top_partitions())
        stale = dict.fromkeys(k for k in judged if k[1] not in self._top and k[1] not in GROUPS and k in self.buckets)
        leaving = {k: self.buckets.pop(k) for k in stale}
        for (_, partition, op_class), bucket in leaving.items():
            self.folded.add(partition, op_class, bucket, self._kept_now)
        others, folded = fold(leaving, keep=self._top, before=cutoff)
        self._kept.extend(key for key in judged if key in self.buckets)
        for key, bucket in others.items():  # judged already (a group is never folded): kept with the buckets they left
            if key in self.buckets:
                self.buckets[key].add(bucket)
            else:
                self.buckets[key] = bucket
                self._kept.append(key)
        self.ranges.update(folded)
        self.folded_before = cutoff

    def _put_away(self, before: int) -> None:
        """Put the kept buckets of seconds before ``before`` away as columns (oldest first: one made late waits behind
        a newer one, a few seconds at most), each call's in time order: records read a block at a time are kept a
        block at a time, with the other partitions' buckets folded from it, and a long span's reader reads the columns
        in time order (``rolled_frame``)."""
        kept, leaving = self._kept, []
        while kept and kept[0][0] < before:
            key = kept.popleft()
            bucket = self.buckets.pop(key, None)
            if bucket is not None:
                leaving.append((key, bucket))
        leaving.sort(key=lambda pair: pair[0][0])
        for key, bucket in leaving:
            self.aged.add(key, bucket)
            if self.live:
                self.aged_peaks.add(key, bucket)
                self.aged_totals.setdefault(key[1:], Bucket()).add(bucket)
        if self.live:
            self.aged_peaks.close(before)
