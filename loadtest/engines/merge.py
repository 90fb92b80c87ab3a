"""Engines' results merged into one run's, as if one run had made all the load.

Each engine's ``mergeable`` count is added with the metrics' own ``merge`` (the one a Locust master
uses for its workers): buckets by wall-clock second, partition and op class; HDR histograms; key
sketches. ``summary.build`` then makes the figures from the sum, so partitions are judged on the
load of every engine together, latency percentiles come from the merged histograms and the top keys
from the merged sketches. Exact per key wherever every engine kept the key apart (each keeps its
50 heaviest keys per second apart and folds the rest into OTHER); the totals are exact always.
The steady phase is when every engine's users all ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from .. import summary
from ..counts import RunCounts
from ..exit_codes import UsageError
from ..mergeable import MERGEABLE_VERSION
from ..operations import OpClass
from ..request_profile import RequestProfile
from ..results import Results

__all__ = ["KEY_DESIGN", "TARGET", "check", "merge"]

#: Settings every engine of one run must share: the keys they address and how.
KEY_DESIGN = ("key_strategy", "partition_key", "row_key_strategy", "key_seed", "skew", "seed_entities")
#: What the engines aimed at, and what they are judged against.
TARGET = ("target_kind", "endpoint", "table", "partition_target", "account_target")


def check(sources: Sequence[tuple[str, Results]]) -> None:
    """One line (``UsageError``) naming the first difference that makes ``sources`` not one run's engines."""
    if not sources:
        raise UsageError("merge: give engines' results (folders or results.json files), or --from-container C --run-id ID")
    for source, results in sources:
        if results.ceiling or results.run.simulated or results.engines:
            what = "a ceiling search" if results.ceiling else "a simulation" if results.run.simulated else "already a merge"
            raise UsageError(f"{source}: {what}, not one engine's run: nothing to merge")
        if results.mergeable.get("version") != MERGEABLE_VERSION:
            raise UsageError(
                f"{source}: no mergeable data (results.json written before engines could be merged, version "
                f"{results.mergeable.get('version', 'none')}): rerun it with this version"
            )
    (first, base), engines = sources[0], {}
    for source, results in sources:
        if results.run.id != base.run.id:
            raise UsageError(f"different run ids: {base.run.id!r} ({first}) and {results.run.id!r} ({source}); merge one run")
        engine = results.mergeable["engine"]
        if engine in engines:
            raise UsageError(f"engine {engine!r} twice: {engines[engine]} and {source}; give each engine's results once")
        engines[engine] = source
        for field in TARGET:
            ours, theirs = getattr(base.run, field), getattr(results.run, field)
            if ours != theirs:
                raise UsageError(f"different targets: {field} {ours!r} ({first}) and {theirs!r} ({source})")
        for name in KEY_DESIGN:
            ours, theirs = base.run.settings.get(name), results.run.settings.get(name)
            if ours != theirs:
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"different key designs: {flag} {ours!r} ({first}) and {theirs!r} ({source})")


def merge(sources: Sequence[tuple[str, Results]]) -> Results:
    """One run's results from its engines' (``check`` first); its findings are the verdict's to fill in."""
    check(sources)
    metrics, workload = RunCounts(), RequestProfile()
    for _, results in sources:
        metrics.merge(results.mergeable["metrics"])
        workload.merge(results.mergeable["workload"])
    clocks = [results.mergeable["metrics"]["clock"] for _, results in sources]
    metrics.started = min(c["started"] for c in clocks)
    ramps = [c["steady_from"] for c in clocks]  # an engine whose ramp never finished: the run had no steady phase
    metrics.steady_from = None if None in ramps else max(ramps)
    metrics.stopped = max(c["stopped"] for c in clocks)
    metrics.steady_until = min(c["stopped"] for c in clocks)
    runs = [results for _, results in sources]
    base = runs[0].run
    names = [results.mergeable["engine"] for results in runs]
    settings = {
        **base.settings,
        "engine": ",".join(names),
        "arrival_rate": sum(float(r.run.settings.get("arrival_rate") or 0) for r in runs),
    }
    info = replace(
        base,
        started=datetime.fromtimestamp(metrics.started, UTC).isoformat(timespec="seconds"),
        duration_s=round(metrics.stopped - metrics.started, 1),
        users=sum(r.run.users for r in runs),
        settings=settings,
        user_classes=_user_classes(runs),
        interrupted=",".join(sorted({r.run.interrupted for r in runs} - {""})),
    )
    merged = summary.build(metrics, info, samples=_samples(runs), workers=_workers(runs), workload=workload.figures())
    merged.integrity = _integrity(runs)
    merged.incomplete = [
        {**step, "step": f"engine {r.mergeable['engine']}: {step['step']}"} for r in runs for step in r.incomplete
    ]
    merged.engines = _shares(runs, merged)
    metrics.close()
    return merged


def _user_classes(runs: Sequence[Results]) -> list[dict[str, Any]]:
    """Each user class of the engines, its users summed over them (its design as the first engine that ran it)."""
    classes: dict[str, dict[str, Any]] = {}
    for results in runs:
        for one in results.run.user_classes:
            known = classes.setdefault(one["name"], {**one, "users": 0})
            known["users"] += one["users"]
    return list(classes.values())


def _samples(runs: Sequence[Results]) -> dict[int, dict[str, Any]]:
    """Per second: users and operations in flight of every engine together; each engine's CPU (and its workers'),
    its servers' and its machine's apart (the busiest machine stands for the run's)."""
    samples: dict[int, dict[str, Any]] = {}
    for results in runs:
        engine = results.mergeable["engine"]
        for second, sample in results.mergeable["samples"]:
            into = samples.setdefault(int(second), {"users": 0})
            into["users"] += sample.get("users") or 0
            cpu = into.setdefault("workers_cpu", {})
            if sample.get("cpu") is not None:
                cpu[f"engine {engine}"] = sample["cpu"]
            for worker, pct in sample.get("workers_cpu", {}).items():
                cpu[f"engine {engine} worker {worker}"] = pct
            for server, pct in sample.get("servers_cpu", {}).items():
                into.setdefault("servers_cpu", {})[f"{server} (engine {engine})"] = pct
            if sample.get("machine_cpu") is not None:
                into["machine_cpu"] = max(into.get("machine_cpu", 0.0), sample["machine_cpu"])
            flight = into.setdefault("in_flight", {}) if sample.get("in_flight") else {}
            for name, value in sample.get("in_flight", {}).items():
                flight[name] = flight.get(name, 0) + value
    return samples


def _workers(runs: Sequence[Results]) -> dict[str, Any]:
    """Engines that were Locust masters: their workers, named by engine."""
    reported = [f"{r.mergeable['engine']}/{w}" for r in runs for w in r.workers.get("reported", [])]
    lost = [{**w, "worker": f"{r.mergeable['engine']}/{w['worker']}"} for r in runs for w in r.workers.get("lost", [])]
    return {"reported": reported, "lost": lost} if reported else {}


def _integrity(runs: Sequence[Results]) -> dict[str, Any]:
    """Every engine read its own writes back: the counts add up (none when an engine did not check)."""
    checked = [r.integrity for r in runs if r.integrity.get("checked")]
    if len(checked) < len(runs):
        return {}
    total: Counter[str] = Counter()
    for integrity in checked:
        total.update({k: v for k, v in integrity.items() if isinstance(v, int) and not isinstance(v, bool)})
    return {"checked": True, **total, "lost_examples": [e for i in checked for e in i.get("lost_examples", [])][:5]}


def _shares(runs: Sequence[Results], merged: Results) -> list[dict[str, Any]]:
    """Each engine's part of the merged run, and what its own report said of its hottest partition."""
    everything = merged.account.entities or 1
    shares = []
    for results in runs:
        hottest = results.hottest(1)
        row = results.headline(hottest[0]) if hottest else None
        shares.append(
            {
                "engine": results.mergeable["engine"],
                "host": results.mergeable.get("host", ""),
                "started": results.run.started,
                "duration_s": results.run.duration_s,
                "users": results.run.users,
                "requests": sum(r.requests for r in results.partitions if r.op_class != OpClass.ALL),
                "attempts": results.attempts,
                "entities": results.account.entities,
                "share": round(results.account.entities / everything, 4),
                "hottest": hottest[0] if hottest else "",
                "hottest_peak_eps": row.judged(results.open_loop)[0] if row else 0.0,
                "hottest_finding": row.finding if row else "",
                "findings": sorted({str(f.kind) for f in results.findings}),
            }
        )
    return shares
