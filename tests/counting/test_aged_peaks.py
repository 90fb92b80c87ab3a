"""The seconds put away keep their partitions' peaks: ten-second windows judged as seconds close, late buckets too."""

from loadtest.counting.aged_peaks import AgedPeaks
from loadtest.counting.buckets import Bucket
from loadtest.counting.phases import moving_average_peak


def test_the_peak_is_the_highest_whole_ten_second_mean_and_a_late_bucket_joins_its_windows():
    served = [0, 5, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 3, 0, 0, 1]
    peaks = AgedPeaks()
    for t, entities in enumerate(served):
        peaks.add((100 + t, "p", "GET"), Bucket(entities=entities, offered=entities, unsent=1, throttled=t % 2))
        peaks.close(100 + t + 1)
    assert peaks.peaks["p"] == (moving_average_peak(served, 10), moving_average_peak([e + 1 for e in served], 10))
    assert peaks.throttled["p"] == len(served) // 2
    peaks.add((101, "p", "PUT"), Bucket(entities=100))  # a worker's report for a second judged long before
    late = served.copy()
    late[1] += 100
    assert peaks.peaks["p"][0] == moving_average_peak(late, 10) == 46.5


def test_a_run_shorter_than_the_window_has_no_aged_peak_and_clear_forgets():
    peaks = AgedPeaks()
    for t in range(5):
        peaks.add((t, "p", "GET"), Bucket(entities=10))
    peaks.close(5)
    assert peaks.peaks["p"] == (0.0, 0.0)  # no whole window: the held seconds' peak stands
    peaks.clear()
    assert not peaks.peaks and not peaks.throttled
