"""The ranges at both ends of the key order as the results hold them: what each was asked for and served, at its peak
window and over the steady phase, against the per-partition target, as one range partition serves it (the counts are
``counting.key_edges``'; ``findings.checklist.key_order`` and ``findings.levels`` judge them)."""

from __future__ import annotations

from ..counting.key_edges import ENDS, KeyEdges
from ..counting.phases import Phases
from .schema import KeyEnd, KeyOrder

__all__ = ["key_order"]


def key_order(edges: KeyEdges, phases: Phases, target: int, *, open_loop: bool) -> KeyOrder:
    """Both ends' figures; the ratio is the asked peak's in an open loop (as a partition's level is), else the served."""
    out = {}
    for name in ENDS:
        end = edges.ends[name]
        seconds, asked, served, throttled = edges.series(name)
        peak, asked_peak = phases.sparse_peak(seconds, served), phases.sparse_peak(seconds, asked)
        judged = asked_peak if open_loop and asked_peak else peak
        landed = {"landed": [end.first_landed, end.last_landed]} if end.last_landed is not None else {}
        out[name] = KeyEnd(
            **landed,  # type: ignore[typeddict-item]
            moves=end.moves,
            puts=end.puts,
            share=round(end.puts / edges.puts, 4) if edges.puts else 0.0,
            key=end.key,
            peak_eps=peak,
            offered_peak_eps=asked_peak,
            mean_eps=phases.sparse_mean(seconds, served),
            offered_mean_eps=phases.sparse_mean(seconds, asked),
            throttled=int(round(float(throttled.sum()))),
            target=target,
            ratio=round(judged / target, 4) if target else 0.0,
        )
    return KeyOrder(append=out["append"], prepend=out["prepend"])
