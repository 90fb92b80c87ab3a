"""The form of results.json's ``advice`` section (``loadtest advise``), declared once as ``ceiling_schema`` declares a
ceiling search's: ``typed_reader`` checks it on read, the results reference shows it."""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["Advice"]


class Advice(TypedDict):
    """``loadtest advise``: the workload and the peak x growth it was judged at, the current design, each family's
    smallest fitting design (or why none), its costs and simulated peak window, the choice, its code, the proof."""

    source: str
    workload: list[str]  # the workload's options
    peak_operations_per_s: float
    growth: float
    judged_at_operations_per_s: float
    headroom: float
    partition_target: int
    account_target: int
    account_over: bool
    current: dict[str, Any]
    why: str
    designs: list[dict[str, Any]]  # per family: fits, why_not, n, label, hottest, ratio, curve, cost, simulated
    chosen: str  # a family, "current", or "" (none fits)
    runner_up: str
    recommendation: str
    chosen_cost: dict[str, Any]
    code: dict[str, str]  # python, csharp
    search_s: float
    leaves_out: str
    verification: dict[str, Any]  # --verify: the scale, per design per partition real beside simulated
