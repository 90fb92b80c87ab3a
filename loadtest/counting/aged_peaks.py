"""Each partition's busiest ten seconds and throttled attempts over the seconds put away as columns: what the live
view adds to the seconds the counts still hold as buckets, so that its peaks stay the run's while the buckets held
stay few (``counts.AGED_AFTER_S``).

A partition's seconds (GET and PUT together, served and asked for) are added as their buckets are put away, oldest
first; once every bucket of a second is in, the ten-second window ending there is judged. A bucket put away late (a
worker's report behind the others) joins its second while the seconds around it are still kept (``KEPT_S``), and the
windows it touches are judged again.
"""

from __future__ import annotations

from collections import Counter

from .buckets import Bucket, BucketKey
from .phases import PEAK_WINDOW_S, moving_average_peak

__all__ = ["KEPT_S", "AgedPeaks"]

KEPT_S = 60  # seconds kept behind the last one judged, for buckets put away late


class AgedPeaks:
    """Per partition: the highest ten-second means (served, asked for) and the throttled attempts, seconds put away."""

    def __init__(self) -> None:
        self.peaks: dict[str, tuple[float, float]] = {}  # partition -> (served, asked) entities/s
        self.throttled: Counter[str] = Counter()
        self._seconds: dict[str, dict[int, tuple[int, int]]] = {}  # partition -> second -> (served, asked)
        self._first: dict[str, int] = {}  # a partition's first second: windows start there or later
        self._judged_to = 0  # the windows ending before this second are judged

    def add(self, key: BucketKey, bucket: Bucket) -> None:
        second, partition, _ = key
        seconds = self._seconds.setdefault(partition, {})
        served, asked = seconds.get(second, (0, 0))
        seconds[second] = (served + bucket.entities, asked + bucket.demand)
        self._first[partition] = min(self._first.get(partition, second), second)
        self.throttled[partition] += bucket.throttled
        if second < self._judged_to:  # late: the windows it falls in again
            self._judge(partition, range(second, min(second + PEAK_WINDOW_S, self._judged_to)))

    def close(self, before: int) -> None:
        """Every bucket of the seconds before ``before`` is in: judge the windows ending there."""
        if before <= self._judged_to:
            return
        for partition, seconds in list(self._seconds.items()):
            self._judge(partition, range(max(self._judged_to, self._first[partition]), before))
            for second in [s for s in seconds if s < before - KEPT_S]:
                del seconds[second]
            if not seconds:  # judged whole: a partition idle since is walked no more
                del self._seconds[partition]
        self._judged_to = before

    def _judge(self, partition: str, ends: range) -> None:
        """The windows ending at ``ends``: whole ones only (from the partition's first second), as the held seconds'
        peaks are."""
        seconds = self._seconds[partition]
        served, asked = self.peaks.setdefault(partition, (0.0, 0.0))
        held = [seconds.get(s, (0, 0)) for s in range(max(self._first[partition], ends.start - PEAK_WINDOW_S + 1), ends.stop)]
        if len(held) >= PEAK_WINDOW_S:
            served = max(served, moving_average_peak([h[0] for h in held]))
            asked = max(asked, moving_average_peak([h[1] for h in held]))
            self.peaks[partition] = (served, asked)

    def clear(self) -> None:
        self.peaks.clear()
        self.throttled.clear()
        self._seconds.clear()
        self._first.clear()
        self._judged_to = 0
