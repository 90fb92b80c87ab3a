"""``loadtest simulate``: a run's workload at any rate through the partition layer's model, in seconds, with a run's
outputs (results.json, timeseries.csv, report.html) from the same summary, verdict and report.

Nothing is sent anywhere: the options that only a real run has are refused at the edge.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import wrapup
from ..emulator.budgets import Budgets
from ..exit_codes import UsageError
from ..findings.assess import checks_for, exit_code
from ..limits import MAX_DURATION_S, MAX_SIMULATED_RATE
from ..options.commands import DURATION, REAL_RUN_ONLY, SIMULATE_OPTIONS, refuse_extra
from ..options.settings import Settings
from ..outputs import check_out, new_run_id
from ..progress import Progress
from ..report import junit
from ..results import summary
from ..results.form import Results, RunInfo
from ..service.operations import OPERATIONS
from ..traffic.run_replay import REPLAYED, replay_path
from ..workload.traffic_profile import load_profile
from .demand import demand_of
from .replay import replay
from .simulation import TRACKED, Simulation, state_bytes

__all__ = ["LEAVES_OUT", "simulate"]

LEAVES_OUT = (
    "latency (no operation is timed); the real partition servers' capacities (the budgets given stand for them); "
    "merges of cold ranges; throttling inside a batch (a batch passes or is refused whole, as in the emulator); "
    "scans across PartitionKeys (counted on the key they start from)"
)


def _settings(ns: argparse.Namespace, extra: list[str]) -> Settings:
    """The run's settings for a simulation, every rule checked: one line and exit 2 otherwise, nothing written."""
    refuse_extra(extra, "simulate", f"only a real run has it (loadtest run); {_WHAT}")
    for dest in REAL_RUN_ONLY:  # not options of this command: a real run's defaults (the demand is --arrival-rate's)
        setattr(ns, dest, 0 if dest == "rate" else None)
    ns.emulate_throttling = True  # the budgets (--emulator-*) are the model's
    replay_path(ns, NEEDS_TRAFFIC)  # a replay's options only with --traffic, and none of the workload's beside it
    settings = Settings.from_options(ns, offline=True)  # reads no real-run option's variable (LOCUST_TIMEOUT=0)
    if TRAFFIC.value(ns) and not settings.arrival_rate:
        return settings  # the profile's demand, at --scale
    if not 0 < settings.arrival_rate <= MAX_SIMULATED_RATE:
        given = f" {settings.arrival_rate:g}" if settings.arrival_rate else ""
        raise UsageError(
            f"--arrival-rate{given}: a simulation needs the demand, operations/s above 0 and at most "
            f"{MAX_SIMULATED_RATE:,}, e.g. --arrival-rate 100000"
        )
    return settings


STEP, TRAFFIC, SCALE, UNATTRIBUTED_OPTION, SPLIT_HOT = SIMULATE_OPTIONS
NEEDS_TRAFFIC = (SCALE, UNATTRIBUTED_OPTION, SPLIT_HOT)  # a replay's own: refused without --traffic

MAX_TICKS = 10**7  # about an hour and a half of computing at the bench's 0.5 ms a tick
MAX_STATE_BYTES = 2**30  # per-key vectors in memory: beyond a gibibyte, a laptop swaps
#: Ticks x keys the partition layer computes: every tick is a pass over every key's vectors, about 0.2 us a key for
#: one operation stream and 0.5 us for the default mix (guid, 100,000 keys): minutes at most, never hours.
MAX_KEY_TICKS = 2 * 10**9
_WHAT = "a simulation sends nothing: give the workload, --arrival-rate, the budgets (--emulator-*), -t and --step"


def _check_size(settings: Settings, seconds: int, step: float) -> None:
    """The simulation is bounded: at most ``MAX_TICKS`` ticks, and per-key state that fits in memory (keys at most:
    the fixed set, or the seeded entities and a key a second)."""
    if seconds / step > MAX_TICKS:
        raise UsageError(
            f"-t {seconds}s / --step {step:g}: {seconds / step:,.0f} ticks, over {MAX_TICKS:,} (hours of computing); "
            "give a larger --step or a shorter -t"
        )
    fixed = settings.keys().keys()
    keys = len(fixed) if fixed is not None else settings.seed_entities + seconds + 1
    streams = sum(len(OPERATIONS[name].demand(batch_size=1, scan_rows=1)) for name in settings.mix)
    need = state_bytes(streams=streams, keys=keys, retry=settings.retry, step=step)
    if need > MAX_STATE_BYTES:
        raise UsageError(
            f"--seed-entities {settings.seed_entities:,} x --mix ({streams} operation streams) x --retry "
            f"{settings.retry.spec()}: the simulation would hold {need / 2**30:.1f} GiB of per-key state, over "
            f"{MAX_STATE_BYTES / 2**30:.0f} GiB; seed fewer entities, mix fewer operations or retry fewer times"
        )


def _check_work(settings: Settings, keys: int, seconds: int, step: float, *, replayed: bool = False) -> None:
    """The simulation ends in minutes: at most ``MAX_KEY_TICKS`` ticks x keys (the demand's, exactly)."""
    ticks = round(seconds / step)
    if ticks * keys > MAX_KEY_TICKS:
        whose = (
            "the profile's named partitions and tail groups"
            if replayed
            else f"--key-strategy {settings.key_strategy}, --seed-entities {settings.seed_entities:,}"
        )
        fewer = "" if replayed else " or fewer keys (fewer --seed-entities, a key strategy with fewer keys)"
        raise UsageError(
            f"-t {seconds}s at --step {step:g} ({ticks:,} ticks) x {keys:,} keys ({whose}): {ticks * keys:,} key-ticks "
            f"to compute, over {MAX_KEY_TICKS:,} (hours of computing); give a larger --step, a shorter -t{fewer}"
        )


def simulate(ns: argparse.Namespace, extra: list[str]) -> int:
    """Validate, simulate, write the outputs, print the findings; the exit code ``--fail-on`` asks for."""
    settings = _settings(ns, extra)
    seconds, step = DURATION.value(ns), STEP.value(ns)
    run_id = new_run_id()
    began, start = time.perf_counter(), int(time.time())
    budgets = settings.emulator
    assert budgets is not None
    replayed, shape, public = None, None, settings.public()
    if TRAFFIC.value(ns):
        replayed = _replay(ns, settings)
        start, span = replayed["start"], replayed["seconds"]
        if getattr(ns, "duration", None) in (None, ""):
            seconds = min(span, MAX_DURATION_S)  # as a replaying run's (``run_replay``): its first week at most
        elif seconds > span:
            raise UsageError(f"-t {seconds}s: longer than the profile's span ({span:,} s); give -t {span}s or less")
        demand, shape = replayed.pop("demand"), replayed.pop("shape")[:seconds]
        rate = replayed["mean_operations_per_s"]
        public = {k: v for k, v in public.items() if k not in REPLAYED} | {"arrival_rate": rate}
    else:
        _check_size(settings, seconds, step)
        demand, rate = demand_of(settings, start=start, seconds=seconds), settings.arrival_rate
    _check_work(settings, len(demand.keys), seconds, step, replayed=replayed is not None)
    out = check_out(settings.out or str(Path("reports") / run_id), overwrite=settings.overwrite)
    simulation = Simulation(
        demand,
        budgets,
        settings.retry,
        rate=rate,
        seconds=seconds,
        step=step,
        arrivals=settings.arrivals,
        seed=settings.key_seed,
        start=start,
        shape=shape,
    )
    with Progress("simulate", seconds, "simulated seconds") as progress:
        metrics = simulation.run(progress)
    info = RunInfo(
        id=run_id,
        started=datetime.fromtimestamp(start, UTC).isoformat(timespec="seconds"),
        duration_s=float(seconds),
        target_kind="simulation",
        table="",
        seeded=0 if replayed else settings.seed_entities,
        partition_target=settings.partition_target,
        account_target=settings.account_target,
        profile=settings.profile,
        simulated=True,
        entity_bytes=replayed["entity_bytes"] if replayed else settings.shape.bytes,
        settings=public,
    )
    results = summary.build(metrics, info)
    results.simulation = {
        "model": _model(budgets, step, replayed is not None),
        "leaves_out": LEAVES_OUT,
        "step_s": step,
        "budgets": asdict(budgets),
        "keys": len(demand.keys),
        "operations": round(rate * float(simulation.shape.sum())),
        "elapsed_s": round(time.perf_counter() - began, 2),
        **({"traffic": replayed} if replayed else {}),
    }
    results.range_splits = [asdict(split) for split in simulation.splits]
    report = not settings.no_report
    if not wrapup.finish(results, out, target=None, started=time.time(), outputs=wrapup.OUTPUTS[-1:], report=report):
        return 1
    code, messages = exit_code(results, checks_for(settings.fail_on))
    written = settings.junit and junit.write(settings.junit, [junit.suite(results, settings.fail_on)])
    _say(results, wrapup.written_line(out, report), messages, settings.junit if written else "")
    return code


def _model(budgets: Budgets, step: float, replayed: bool) -> str:
    return (
        f"the throttling emulator's partition layer (token buckets per PartitionKey and per account; {budgets.model}"
        + f") in virtual time, ticks of {step:g} s; throttled operations retried after the retry strategy's mean wait; "
        + (
            "demand per key as the traffic profile counted it, its tail's keys in groups alike in demand, at the "
            "profile's rate over time; "
            if replayed
            else "demand per key from the key strategy's and skew's probabilities; "
        )
        + f"the {TRACKED} keys with the most demand counted apart, the rest as other partitions."
    )


def _replay(ns: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """The profile --traffic names as the demand, at --scale or with --arrival-rate as its peak: what the results say
    of it, with the ``demand`` and the ``shape`` (each second's rate over the mean) to run."""
    path = TRAFFIC.value(ns)
    profile = load_profile(path)
    unattributed, ways = UNATTRIBUTED_OPTION.value(ns), SPLIT_HOT.value(ns)
    logged = replay(profile, unattributed=unattributed)
    scale = settings.arrival_rate / logged.peak_rate if settings.arrival_rate else SCALE.value(ns)
    replayed = replay(profile, unattributed=unattributed, split_hot=ways, over=settings.partition_target, scale=scale)
    split = sorted(set(logged.demand.keys) - set(replayed.demand.keys))  # each replaced by its keys
    if replayed.peak_rate * scale > MAX_SIMULATED_RATE:
        raise UsageError(
            f"--scale {scale:g}: the profile's peak of {replayed.peak_rate:,.1f} operations/s becomes "
            f"{replayed.peak_rate * scale:,.0f}/s, over {MAX_SIMULATED_RATE:,}; give a smaller --scale"
        )
    tail = profile["tail"]
    return {
        "profile": str(path),
        "scale": round(scale, 6),
        "unattributed": unattributed,
        "span": [profile["span"]["start"], profile["span"]["start"] + profile["span"]["seconds"]],
        "start": int(profile["span"]["start"]),
        "seconds": int(profile["span"]["seconds"]),
        "logged_operations_per_s": round(replayed.mean_rate, 3),
        "mean_operations_per_s": replayed.mean_rate * scale,
        "peak_operations_per_s": round(replayed.peak_rate * scale, 3),
        "partitions_named": len(profile["partitions"]),
        "tail_partitions": sum(row["keys"] for row in tail),
        "unattributed_share": round(sum(d["requests"] for d in profile["unattributed"].values()) / profile["requests"], 4),
        "hashed_keys": bool(profile.get("hashed_keys")),
        "split_hot": ways,
        "split_keys": split,
        "entity_bytes": int(profile.get("entity_bytes") or settings.shape.bytes),
        "demand": replayed.demand,
        "shape": replayed.shape,
    }


def _say(results: Results, written: str, messages: list[str], junit_file: str = "") -> None:
    lines = [f"Simulated {results.simulation['operations']:,} operations in {results.simulation['elapsed_s']:g} s."]
    lines.append(written)
    lines += [f"JUnit: {junit_file}"] if junit_file else []
    lines += wrapup.console_lines(results)
    lines += [f"  FAILED {m}" for m in messages]
    print("\n".join(lines), file=sys.stdout, flush=True)
