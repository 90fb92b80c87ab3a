"""How much of an open loop's schedule the generator sent, and the operations in flight it needed for it (Little's
law). Pure questions of the results; ``findings.open_loop`` words the answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..results.form import Results

__all__ = [
    "SENT_SHARE",
    "Concurrency",
    "concurrency",
    "sent_share",
]


#: UNSENT: an open loop sent under this share of its schedule's entities.
SENT_SHARE = 0.98


@dataclass(frozen=True)
class Concurrency:
    """An open loop's operations in flight against what its schedule needed (Little's law: L = rate x mean hold)."""

    rate: float  # operations/s the schedule asked
    mean_hold_s: float  # mean time an operation held its lane: from its start to its end, retries and backoffs included
    cap: int  # operations in flight allowed at once, every process together (--max-in-flight per process)
    peak: int  # the most in flight in a second
    capped: int  # slots that found every lane busy and waited

    @property
    def needed(self) -> float:
        return self.rate * self.mean_hold_s


def concurrency(results: Results) -> Concurrency | None:
    """The open loop's operations in flight (``running.in_flight``); None for a closed loop, a simulation, or results
    written before they were counted."""
    figures = results.arrivals.get("in_flight")
    if not figures:
        return None
    return Concurrency(
        rate=float(results.arrivals.get("rate", 0) or 0),
        mean_hold_s=figures["mean_hold_ms"] / 1000.0,
        cap=figures["cap"],
        peak=figures["peak"],
        capped=figures["capped"],
    )


def sent_share(results: Results) -> float | None:
    """An open loop's entities sent, of its schedule's demand (sent, dropped and still owed at the end); None for a
    closed loop."""
    if not results.open_loop:
        return None
    offered = int(results.timeseries["offered"].sum())
    asked = offered + int(results.timeseries["unsent"].sum())
    return offered / asked if asked else 1.0
