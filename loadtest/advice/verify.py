"""``advise --verify``: the current and the recommended design run for real through the throttling emulator on a
fresh embedded Azurite table, beside the simulation of the same, at a scale this machine sends.

Scaled: the operations/s and every budget and target by one factor, so each partition's level (its demand over its
target), served share and throttled share are the ones the design meets at full scale (the buckets hold a second of
budget, the emulator's default, so a batch or a scan of 100 fits a scaled bucket as it fits Azure's). Each attempt is
sent once (``--retry none``), so what is compared is the partition layer's answer, not a retry policy's: per
partition, the served entities/s and the throttled share of attempts, then all of them together. Each real run is ``loadtest run``
in a child process (its own Azurite, its own outputs beside the advice's); the simulation is this process's.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..emulator.budgets import Budgets
from ..exit_codes import RunError
from ..limits import MAX_USER_ARRIVAL_RATE
from ..outputs import RESULTS_FILE
from ..results.form import Results
from ..service.operations import OpClass
from ..workload.key_templates import bucket_key
from ..workload.traffic_profile import load_profile
from .designs import Design
from .search import Search, simulated
from .workload import Workload

__all__ = ["SERVED_WITHIN", "THROTTLED_WITHIN", "VERIFY_RETRY", "verify"]

SERVED_WITHIN = 0.15  # the served share, relative: real against simulated
THROTTLED_WITHIN = 0.05  # the throttled share of attempts, in points
VERIFY_RETRY = "none"
#: A partition compared needs this many real attempts: fewer, and the draw of keys moves its shares past the bounds.
LEAST_ATTEMPTS = 60


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:40] or "design"


def _sharded_profile(workload: Workload, design: Design, folder: Path) -> dict[str, str]:
    """The traffic profile the workload replays, with each spread key's row as ``n`` rows ``00-key`` ... of a share
    each (what write sharding asks of them), written beside the advice: the run options that replay it."""
    spec = workload.settings.key_strategy
    path, _, mode = spec.removeprefix("traffic:").rpartition(":")
    if mode not in ("spread", "apart"):
        path, mode = spec.removeprefix("traffic:"), "spread"
    profile = load_profile(path)
    spread, rows = set(design.spread_keys), []
    for row in profile["partitions"]:
        if row["key"] not in spread:
            rows.append(row)
            continue
        share = {c: {k: v / design.n for k, v in d.items()} for c, d in row["demand"].items()}
        rows += [{**row, "key": bucket_key(row["key"], j, design.n), "demand": share} for j in range(design.n)]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "traffic-sharded.json"
    target.write_text(json.dumps({**profile, "partitions": rows}, indent=1), encoding="utf-8")
    keys = len(rows) + sum(int(group["keys"]) for group in profile["tail"])
    return {"key_strategy": f"traffic:{target}:{mode}", "seed_entities": str(max(keys, workload.settings.seed_entities))}


#: The seconds left out of the comparison at the start, on both sides: the buckets' initial second of budget, which a
#: fluid model spends on every operation alike and the emulator on the first ones to arrive, and the users' start.
SETTLE_S = 1


def _seconds(results: Results) -> tuple[Any, int]:
    """Each partition's sums per whole second after the first ``SETTLE_S`` (the last second, cut short by the run's
    end, left out too), GET and PUT together; and how many seconds that window holds."""
    frame = results.timeseries
    first = int(frame["t"].min()) if len(frame) else 0
    last = first + int(results.run.duration_s)
    kept = frame[(frame["t"] >= first + SETTLE_S) & (frame["t"] < last - 1) & (frame["op_class"] != OpClass.ALL)]
    per_second = kept.groupby(["partition", "t"])[["entities", "offered", "unsent", "attempts", "throttled"]].sum()
    return per_second, max(1, last - 1 - first - SETTLE_S)


def _share_error(per_second: Any) -> float:
    """The standard error of a window's served share, read from its seconds' own shares: how far the draw of
    operations (their keys, their sizes: a scan of 100 beside point reads) and the entities admitted on one side of a
    second's edge and counted on the other move it in a window this short. Measured, not modelled: 0 under 3 seconds."""
    asked = per_second["offered"] + per_second["unsent"]
    shares = (per_second["entities"] / asked.where(asked > 0)).dropna()
    return float(shares.std(ddof=1) / math.sqrt(len(shares))) if len(shares) >= 3 else 0.0


def _figures(per_second: Any, seconds: int, ratio: float) -> dict[str, float]:
    """One partition's (or several together) figures over the window: its level, served entities/s, served and
    throttled shares, and the served share's standard error."""
    row = per_second.sum()
    asked = float(row["offered"] + row["unsent"])
    return {
        "ratio": round(ratio, 4),
        "served_eps": round(float(row["entities"]) / seconds, 2),
        "served_share": round(float(row["entities"]) / asked, 4) if asked else 1.0,
        "served_share_se": round(_share_error(per_second.groupby(level="t").sum()), 4),
        "throttled_share": round(float(row["throttled"]) / float(row["attempts"]), 4) if row["attempts"] else 0.0,
        "attempts": int(row["attempts"]),
        "entities": int(row["entities"]),
        "asked": int(asked),
    }


def _per_partition(results: Results) -> tuple[dict[str, dict[str, float]], Any, int]:
    """Each partition's figures over the window (``_figures``), with the seconds they were read from."""
    per_second, seconds = _seconds(results)
    levels = {row.partition: row.offered_ratio or row.ratio for row in results.partitions}
    out = {
        str(partition): _figures(rows, seconds, levels.get(str(partition), 0.0))
        for partition, rows in per_second.groupby(level="partition")
    }
    return out, per_second, seconds


def _size_spread(design: Design) -> dict[str, float]:
    """Per key, the coefficient of variation of its operations' entities (a mix of point operations and batches or
    scans of 100 spreads them a hundredfold): over a throttled key's budget, how many operations fit it depends on
    how many large ones were drawn."""
    demand = design.demand
    assert demand is not None
    ops, first, second = (np.zeros(len(demand.keys)) for _ in range(3))
    for stream in demand.streams:
        if stream.keyed and stream.clock is None:
            ops += stream.share * stream.probabilities
            first += stream.share * stream.probabilities * stream.entities
            second += stream.share * stream.probabilities * stream.entities**2
    out = {}
    for key, n, m1, m2 in zip(demand.keys, ops, first, second, strict=True):
        if n > 0 and m1 > 0:
            mean = m1 / n
            out[key] = float(math.sqrt(max(0.0, m2 / n - mean**2)) / mean)
    return out


def _agree(real: dict[str, float], sim: dict[str, float], spread: float) -> tuple[bool, float, float]:
    """(Agrees, the served bound, the throttled bound): the served share of the demand within ``SERVED_WITHIN`` of the
    simulation's (relative), or three standard errors of the two windows' served shares where that is wider (their
    seconds' own spread: a run of a few seconds, or one starved of CPU, moves it more); the throttled share of
    attempts within ``THROTTLED_WITHIN`` points, or three standard deviations of its sampling where that is wider: its
    binomial, and, on a key throttled at its budget, the draw of operation sizes
    (the budget holds a fixed number of entities, so a few more batches drawn leave room for fewer operations:
    ``spread`` is the sizes' coefficient of variation). Shares, not entities/s: a run draws each operation's key at
    random, and its own draw is what it served from."""
    share, attempts = sim["throttled_share"], max(1, real["attempts"])
    admitted = (1 - share) * attempts
    sizes = (1 - share) * spread / math.sqrt(max(1.0, admitted)) if share > 0.01 else 0.0
    sigma = math.sqrt(share * (1 - share) / attempts + sizes**2)
    throttled_bound = max(THROTTLED_WITHIN, 3 * sigma)
    measured = 3 * math.hypot(real.get("served_share_se", 0.0), sim.get("served_share_se", 0.0))
    served_bound = max(SERVED_WITHIN, measured / max(sim["served_share"], 1e-9))
    served_ok = abs(real["served_share"] - sim["served_share"]) <= served_bound * max(sim["served_share"], 1e-9)
    return served_ok and abs(real["throttled_share"] - share) <= throttled_bound, served_bound, throttled_bound


def _compare(real: Results, sim: Results, spread: dict[str, float]) -> list[dict[str, Any]]:
    """Per partition both sides counted apart, then all of them together: the figures side by side and whether they
    agree."""
    (r, r_seconds, r_n), (s, s_seconds, s_n) = _per_partition(real), _per_partition(sim)
    rows = []
    shared = sorted(r.keys() & s.keys(), key=lambda p: (-s[p]["ratio"], p))
    for partition in shared:
        compared = r[partition]["attempts"] >= LEAST_ATTEMPTS
        agrees, served_bound, throttled_bound = _agree(r[partition], s[partition], spread.get(partition, 0.0))
        rows.append(
            {
                "partition": partition,
                "real": r[partition],
                "simulated": s[partition],
                "compared": compared,
                "agrees": agrees or not compared,
                "served_within": round(served_bound, 3),
                "throttled_within": round(throttled_bound, 3),
            }
        )
    if len(shared) > 1:
        whole = {
            side: _figures(seconds.loc[shared], n, max(rows_of[p]["ratio"] for p in shared))
            for side, rows_of, seconds, n in (("real", r, r_seconds, r_n), ("simulated", s, s_seconds, s_n))
        }
        agrees, served_bound, throttled_bound = _agree(whole["real"], whole["simulated"], max(spread.values(), default=0.0))
        rows.append(
            {
                "partition": "(these partitions together)",
                **whole,
                "compared": True,
                "agrees": agrees,
                "served_within": round(served_bound, 3),
                "throttled_within": round(throttled_bound, 3),
            }
        )
    return rows


def verify(found: Search, workload: Workload, out: Path, *, rate: float, seconds: int) -> dict[str, Any]:
    """The current and the chosen design, real beside simulated, at ``rate`` operations/s (the scale: ``rate`` over
    the peak x growth, the budgets and targets scaled alike) for ``seconds`` each."""
    settings = workload.settings
    target, account = settings.partition_target, settings.account_target
    scaled_target = max(1, round(target * min(1.0, rate / workload.rate)))
    factor = scaled_target / target
    scaled_account = max(1, round(account * factor))
    designs = [found.current]
    if found.chosen is not None and found.chosen.design is not None and found.chosen.family not in ("current", "accounts"):
        designs.append(found.chosen.design)
    done: dict[str, Any] = {
        "factor": round(factor, 6),
        "operations_per_s": round(workload.rate * factor, 3),
        "partition_target": scaled_target,
        "account_target": scaled_account,
        "seconds": seconds,
        "retry": VERIFY_RETRY,
        "served_within": SERVED_WITHIN,
        "settle_s": SETTLE_S,
        "throttled_within": THROTTLED_WITHIN,
        "designs": [],
    }
    budgets = Budgets(partition_rate=scaled_target, account_rate=scaled_account)
    for design in designs:
        entry: dict[str, Any] = {"family": design.family, "n": design.n, "label": design.label}
        done["designs"].append(entry)
        folder = out / "verify" / _slug(f"{design.family}-{design.n}")
        options = design.run_options
        if options is None:
            entry["why_not"] = "no key strategy of a run sends this design yet: the simulation stands alone"
            continue
        if options.get("key_strategy") == "traffic-sharded":
            options = _sharded_profile(workload, design, folder)
        try:
            real = _real_run(workload, options, folder / "real", done, seconds)
        except RunError as err:  # the search's answer stands and is written; the proof says what stopped it
            entry["why_not"], entry["agrees"] = f"the verifying run failed: {err}", False
            continue
        sim = simulated(design, workload, budgets=budgets, rate=done["operations_per_s"], seconds=seconds, retry=VERIFY_RETRY)
        entry["real_run"] = str(folder / "real")
        entry["partitions"] = _compare(real, sim, _size_spread(design))
        entry["agrees"] = all(row["agrees"] for row in entry["partitions"]) and any(r["compared"] for r in entry["partitions"])
    done["agrees"] = all(e.get("agrees", True) for e in done["designs"])
    return done


def _real_run(workload: Workload, options: dict[str, str], folder: Path, scale: dict[str, Any], seconds: int) -> Results:
    """``loadtest run`` of the workload with ``options`` at the scale, on a fresh embedded Azurite: its results."""
    per_s = scale["operations_per_s"]
    users = max(10, math.ceil(per_s / MAX_USER_ARRIVAL_RATE))
    argv = [
        sys.executable, "-m", "loadtest", "run", *workload.argv(**options),
        "--arrival-rate", f"{per_s:g}", "--emulate-throttling",
        "--emulator-partition-rate", str(scale["partition_target"]), "--emulator-account-rate", str(scale["account_target"]),
        "--partition-target", str(scale["partition_target"]), "--account-target", str(scale["account_target"]),
        "--retry", VERIFY_RETRY,
        "-t", f"{seconds}s", "-u", str(users), "-r", str(users), "--out", str(folder), "--overwrite",
    ]  # fmt: skip
    env = dict(os.environ)  # $AZURE_STORAGE_CONNECTION_STRING's target if set (a fresh table), else its own Azurite
    print(f"advise: verifying on a real table -> {folder}", flush=True)
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, env=env, timeout=seconds + 600, check=False)
    except subprocess.TimeoutExpired as err:
        raise RunError(f"advise --verify: the run in {folder} took over {seconds + 600} s") from err
    if not (folder / RESULTS_FILE).is_file():
        raise RunError(f"advise --verify: the run in {folder} left no results (exit {done.returncode}); see above")
    return Results.load_file(folder / RESULTS_FILE)
