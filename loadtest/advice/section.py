"""The search as results.json's ``advice`` section, its sentences included: the one form the console, the report's
"Designs that fit" and the JUnit cases render from."""

from __future__ import annotations

from typing import Any

from ..findings.remedies import HEADROOM
from .code import key_code
from .costs import Cost
from .designs import Design, Load
from .search import Answer, Search

__all__ = ["LEAVES_OUT", "advice_section", "console", "pct"]

LEAVES_OUT = (
    "the real partition servers' capacities (the targets stand for them); a hot row inside a bucket (the RowKey's "
    "hash spreads the rows, not a row's own load); how the table grows (a scan's cost is counted at the table's "
    "seeded size); latency (a fanned-out scan is as slow as its slowest bucket: said, not timed)"
)


def pct(ratio: float) -> str:
    """A share of a target as a percentage, to a tenth where a whole one would round across the 80 % line."""
    return f"{ratio:.1%}" if 0.79 <= ratio < 0.81 else f"{ratio:.0%}"


def _cost(cost: Cost | None) -> dict[str, Any]:
    if cost is None:
        return {}
    return {
        "extra_requests_per_s": round(cost.extra_requests_s, 1),
        "extra_entities_per_s": round(cost.extra_entities_s, 1),
        "batches_split_per_s": round(cost.batches_split_s, 1),
        "atomicity": cost.atomicity,
        "read_path": cost.read_path,
        "ops": [
            {
                "op": o.op,
                "per_s": round(o.per_s, 1),
                "change": o.change,
                "extra_requests_per_s": round(o.extra_requests_s, 1),
                "extra_entities_per_s": round(o.extra_entities_s, 1),
            }
            for o in cost.ops
        ],
    }


def _design(design: Design, target: float, account_target: float) -> dict[str, Any]:
    where, eps, what = design.load.hottest()
    return {
        "n": design.n,
        "label": design.label,
        "hottest": where,
        "hottest_is": what,
        "hottest_eps": round(eps, 1),
        "ratio": round(eps / target, 4),
        "account_eps": round(design.load.account_eps, 1),
        "account_ratio": round(design.load.account_eps / account_target, 4),
        "range_eps": round(design.load.range_eps, 1),
        "spread_keys": design.spread_keys[:50],  # the hottest first; how many in all:
        "spread_count": len(design.spread_keys),
    }


def _answer(answer: Answer, target: float, account_target: float) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "family": answer.family,
        "applies": answer.applies,
        "fits": answer.design is not None,
        "why_not": answer.why_not,
    }
    if answer.design is not None:
        entry.update(_design(answer.design, target, account_target))
    entry["curve"] = [[n, eps] for n, eps in answer.curve]
    entry["cost"] = _cost(answer.cost)
    entry["simulated"] = dict(answer.simulated)
    return entry


def _why_now(found: Search, target: float, account_target: float) -> str:
    """Why the current design does (not) fit, from its load at the peak x growth."""
    w, load = found.workload, found.current.load
    where, eps, what = load.hottest()
    at = f"at {w.rate:,.0f} operations/s (the peak {w.peak:,.0f}/s x {w.growth:g})"
    ratio = eps / target
    if what == "range":
        said = (
            f"As it is ({w.settings.key_strategy}), every new key sorts at one end of the key order, so one range "
            f"partition takes every insert: {eps:,.0f} entities/s {at}, {pct(ratio)} of the {target:,.0f}/s a "
            "partition serves; Azure's load balancing cannot split a range whose hot end keeps moving with it"
        )
    elif what == "current key":
        said = (
            f"As it is ({w.settings.key_strategy}), the current period's key takes every write: {eps:,.0f} entities/s "
            f"{at}, {pct(ratio)} of the {target:,.0f}/s target"
        )
    else:
        said = (
            f"As it is ({w.settings.key_strategy}), partition {where!r} asks {eps:,.0f} entities/s {at}, {pct(ratio)} of "
            f"the {target:,.0f}/s target"
        )
    said += " (under 80 %: it fits)" if ratio < HEADROOM else ""
    if load.account_eps >= account_target:
        said += (
            f"; the account asks {load.account_eps:,.0f} entities/s, {pct(load.account_eps / account_target)} of its "
            f"{account_target:,.0f}/s target, whatever the keys"
        )
    return said + "."


def _recommend(found: Search, target: float) -> str:
    chosen, w = found.chosen, found.workload
    if chosen is None or chosen.design is None:
        return (
            "No design searched fits: none keeps every partition under 80 % of its target at "
            f"{w.rate:,.0f} operations/s; see why beside each."
        )
    design, cost = chosen.design, chosen.cost
    if chosen.family == "current":
        return f"Keep the design as it is: its hottest partition stays under 80 % of the target at {w.rate:,.0f} operations/s."
    if chosen.family == "accounts":
        said = (
            f"No key design helps: the account is over its target whatever the keys. Spread the workload over "
            f"{design.n} storage accounts (each then asks {design.load.account_eps:,.0f} entities/s of its "
            f"{w.settings.account_target:,}/s)"
        )
        if found.runner_up is not None and found.runner_up.design is not None:
            each, (_, eps, _) = w.rate / design.n, found.runner_up.design.load.hottest()
            said += (
                f", and within each, its partitions being hot too, {found.runner_up.design.label}, sized on the account's "
                f"share ({each:,.0f} operations/s): its hottest partition asks {eps:,.0f} entities/s, {pct(eps / target)} "
                "of the target"
            )
        return said + "." + _scanned(found.current.load)
    _, eps, _ = design.load.hottest()
    said = (
        f"Recommended: {design.label}. Its hottest partition asks {eps:,.0f} entities/s at {w.rate:,.0f} operations/s, "
        f"{pct(eps / target)} of the target"
    )
    if cost is not None:
        said += (
            f"; it costs the application {cost.extra_requests_s:,.0f} more requests/s and "
            f"{cost.extra_entities_s:,.0f} more entities/s"
            + (f", {cost.batches_split_s:,.0f} batches/s split" if cost.batches_split_s else "")
        )
    return said + "." + _scanned(design.load)


#: Scanned rows past this share of the entities a design asks for: the queries, not the keys, are the load.
SCANNED_SHARE = 0.5


def _scanned(load: Load) -> str:
    """Where scanned rows are most of the entities, a sentence that says so and names the query-side remedy."""
    if not load.account_eps or load.scanned_eps / load.account_eps < SCANNED_SHARE:
        return ""
    return (
        f" Scanned rows are {pct(load.scanned_eps / load.account_eps)} of the {load.account_eps:,.0f} entities/s it asks "
        "for: queries that read fewer rows (a narrower range, an index entity that names the rows wanted, $top) would "
        "cut more than any key design."
    )


def advice_section(found: Search, *, elapsed_s: float, verification: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``advice`` section of results.json."""
    w = found.workload
    target, account_target = float(w.settings.partition_target), float(w.settings.account_target)
    current = {**_design(found.current, target, account_target), "simulated": dict(found.current_simulated)}
    chosen = found.chosen
    code = key_code(chosen.design) if chosen is not None and chosen.design is not None else {"python": "", "csharp": ""}
    return {
        "source": w.source,
        "workload": w.argv(),
        "peak_operations_per_s": round(w.peak, 3),
        "growth": w.growth,
        "judged_at_operations_per_s": round(w.rate, 3),
        "headroom": HEADROOM,
        "partition_target": int(target),
        "account_target": int(account_target),
        "account_over": found.account_over,
        "current": current,
        "why": _why_now(found, target, account_target),
        "designs": [_answer(a, target, account_target) for a in found.answers],
        "chosen": chosen.family if chosen is not None else "",
        "runner_up": found.runner_up.family if found.runner_up is not None else "",
        "recommendation": _recommend(found, target),
        "chosen_cost": _cost(chosen.cost) if chosen is not None else {},
        "code": code,
        "search_s": round(elapsed_s, 3),
        "leaves_out": LEAVES_OUT,
        "verification": verification or {},
    }


def console(advice: dict[str, Any]) -> list[str]:
    """The advice as the console prints it: the current design, the recommendation, then each family, those that
    fit cheapest first, then those that do not."""
    lines = [
        f"Advice at {advice['judged_at_operations_per_s']:,.0f} operations/s (the peak {advice['peak_operations_per_s']:,.0f}/s "
        f"x growth {advice['growth']:g}), every partition held under {advice['headroom']:.0%} of its "
        f"{advice['partition_target']:,}/s target:",
        f"  {advice['why']}",
        f"  {advice['recommendation']}",
    ]
    fitting = [d for d in advice["designs"] if d["fits"]]
    fitting.sort(key=lambda d: d["cost"].get("extra_requests_per_s", 0) + d["cost"].get("extra_entities_per_s", 0))
    for d in fitting:
        mark = "recommended" if d["family"] == advice["chosen"] else "runner-up" if d["family"] == advice["runner_up"] else "fits"
        if advice["account_over"] and d["family"] != "accounts":  # sized on the whole: the one within each is named above
            mark = "fits (its partitions only, sized on the whole workload: the account needs more accounts)"
        cost = d["cost"]
        lines.append(
            f"  {mark}: {d['label']}: hottest {pct(d['ratio'])} of the target; +{cost['extra_requests_per_s']:,.0f} requests/s, "
            f"+{cost['extra_entities_per_s']:,.0f} entities/s"
        )
    lines += [f"  does not fit: {d['family']}: {d['why_not']}" for d in advice["designs"] if d["applies"] and not d["fits"]]
    lines += [f"  not searched: {d['family']}: {d['why_not']}" for d in advice["designs"] if not d["applies"]]
    check = advice.get("verification") or {}
    for entry in check.get("designs", []):
        if "partitions" not in entry:
            lines.append(f"  verify {entry['label']}: {entry.get('why_not', '')}")
            continue
        agreed = "agrees with" if entry["agrees"] else "DISAGREES with"
        lines.append(
            f"  verify {entry['label']}: the real run {agreed} the simulation on each of its "
            f"{sum(r['compared'] for r in entry['partitions'])} partitions compared (scale {check['factor']:g})"
        )
    return lines
