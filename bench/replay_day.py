"""``loadtest simulate --traffic`` over a day of traffic on 100,000 partitions, at 10x: the whole command's wall time
and the child's peak memory, as a user runs it.

The profile is made through ``ProfileCounts`` (the accumulator ``loadtest traffic`` fills) from a day's demand drawn
once: each partition's GET and PUT requests from a Pareto skew, the day's arrivals in a diurnal curve (a quiet night, a
busy afternoon). Each partition's totals go in whole (not request by request: 100 million ``add`` calls would time
the bench, not the replay). The issue's goal: a day over 100,000 partitions replayed at 10x in under 5 minutes.

    .venv/bin/python bench/replay_day.py [--partitions 100000] [--scale 10] [--step 1]
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from loadtest.traffic.profile_counts import ProfileCounts

ROOT = Path(__file__).resolve().parent.parent
DAY = 86_400
START = 1_795_478_400  # a midnight, UTC


def profile(path: Path, partitions: int, mean_rate: float, *, span: int = DAY, diurnal: bool = True) -> Path:
    """``span`` seconds of traffic over ``partitions`` (a Pareto skew of GET and PUT requests) at ``mean_rate``, in a
    diurnal curve (or flat), minute by minute, as ``loadtest traffic`` writes a profile (through its own accumulator).
    ``bench/advise_search.py`` makes its hour with it too."""
    rng = np.random.default_rng(1)
    weights = rng.pareto(1.2, partitions) + 1
    requests = rng.multinomial(int(mean_rate * span), weights / weights.sum())
    counts = ProfileCounts()
    for i, n in enumerate(requests):
        if n:
            gets = int(n * 0.8)
            counts.partitions[f"p{i:06d}"] = {"GET": [float(gets), float(gets)], "PUT": [float(n - gets), float(n - gets)]}
    for operation, op_class in (("QueryEntity", "GET"), ("InsertOrMergeEntity", "PUT")):
        n = sum(int(c[op_class][0]) for c in counts.partitions.values())
        counts.operations[(operation, op_class)] = counts.operation_entities[(operation, op_class)] = n
    minutes = range(0, span, 60)
    curve = np.array([1.0 - 0.6 * math.cos(2 * math.pi * (s - 4 * 3600) / DAY) if diurnal else 1.0 for s in minutes])
    per_minute = rng.multinomial(int(requests.sum()), curve / curve.sum())
    for minute, n in enumerate(per_minute):
        counts.seconds[START + 60 * minute] += int(n)
    return counts.write(path, first=START, last=START + span - 1, hashed=False, records=int(requests.sum()), entity_bytes=1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=200.0, help="the logs' mean operations/s")
    parser.add_argument("--scale", type=float, default=10.0)
    parser.add_argument("--step", default="1")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        made = time.perf_counter()
        path = profile(Path(folder) / "traffic.json", args.partitions, args.rate)
        print(f"profile: {args.partitions:,} partitions, a day at {args.rate:g}/s mean, {path.stat().st_size / 1e6:.1f} MB, "
              f"made in {time.perf_counter() - made:.1f} s")  # fmt: skip
        command = [sys.executable, "-m", "loadtest", "simulate", "--traffic", str(path), "--scale", str(args.scale)]
        command += ["--step", args.step, "--out", str(Path(folder) / "out")]
        began = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - began
        peak_mb = int(done.stderr.strip().splitlines()[-1]) / 1024
        said = [line for line in done.stdout.splitlines() if line.startswith("Simulated")]
        print(f"simulate --traffic --scale {args.scale:g} --step {args.step}: exit {done.returncode}, {wall:.1f} s wall, "
              f"{peak_mb:,.0f} MB peak; {said[0] if said else done.stdout[-300:] + done.stderr[-300:]}")  # fmt: skip


if __name__ == "__main__":
    main()
