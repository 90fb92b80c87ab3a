"""Which of the run's seconds its figures cover: a ramp that took most of them, an end in which the target no longer
answered. Pure questions of the results; the ``findings`` wing words the answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..results import series_frame
from ..results.form import Results
from ..service.error_codes import UNANSWERED

__all__ = [
    "LOST_AFTER_S",
    "RAMP_SHARE",
    "Ramp",
    "ramp_dominates",
    "target_lost",
]


#: Consecutive seconds of nothing but unanswered operations, up to the run's end, that mean the target was lost.
LOST_AFTER_S = 2


def target_lost(results: Results) -> tuple[int, int] | None:
    """(The second the target stopped answering, operations failed since) when the run ended with at least
    ``LOST_AFTER_S`` seconds in which every operation failed without an answer; else None. It stopped the second
    after its last answer: seconds that completed nothing before the first failure held operations in flight (a
    client retrying a refused connection), and were lost too."""
    frame = results.timeseries
    seconds = (
        frame.assign(unanswered=series_frame.tally(frame, "errors", UNANSWERED)).groupby("t")[["requests", "unanswered"]].sum()
    )
    since, failed, streak = 0, 0, 0
    latest_first = seconds.iloc[::-1]
    for t, requests, unanswered in zip(
        latest_first.index.tolist(), *(latest_first[c].tolist() for c in latest_first), strict=True
    ):
        if requests == 0:
            continue  # nobody sent anything that second (a ramp, a stop): neither lost nor alive
        if unanswered < requests:
            since = t + 1  # seconds that completed nothing between its last answer and the first refusal: in flight
            break
        since, failed, streak = t, failed + unanswered, streak + 1
    return (since, failed) if streak >= LOST_AFTER_S else None


#: Of the seconds the users ran, the share their ramp may take: past it the steady phase is too short to judge.
RAMP_SHARE = 0.5


@dataclass(frozen=True)
class Ramp:
    """A ramp that took most of the run: its seconds, the seconds the users ran (ramp included), the steady phase's."""

    ramp_s: float
    ran_s: float
    steady_s: int


def ramp_dominates(results: Results) -> Ramp | None:
    """The users' ramp took over ``RAMP_SHARE`` of the seconds they ran (or never finished), so the means and the peak
    window cover only what was left. None for a simulation (no ramp) and a ceiling search (each step ramps and is
    judged on its own seconds)."""
    run = results.run
    if run.simulated or results.ceiling or not results.partitions:
        return None
    steady = run.steady_seconds
    ran = run.steady_from_s + steady if steady else run.duration_s
    ramp = run.steady_from_s if steady else ran
    if ran <= 0 or ramp <= RAMP_SHARE * ran:
        return None
    return Ramp(ramp_s=ramp, ran_s=ran, steady_s=steady)
