"""``loadtest simulate`` at production scale: wall time, CPU time and peak memory of the whole command.

    .venv/bin/python bench/simulate_scale.py            # both cases, one after the other
    .venv/bin/python bench/simulate_scale.py --case 1h  # only the 100,000 operations/s x 1 h case

Each case runs as a user runs it (``python -m loadtest simulate ... --out DIR``, outputs and report included) in a
child process of its own, measured by ``os.wait4`` (that child's own CPU time and peak resident memory). The design:
GUID keys over 10,000 seeded entities, zipfian reads and upserts (80/20), so 10,000 partitions with a few hot ones;
the account's budget is raised to twice the demand in entities/s (an account asked for 100,000 operations/s has
had its limits raised), so the per-partition budgets decide. The bounds the issue sets: under 60 s and 1 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ["--key-strategy", "guid", "--seed-entities", "10000", "--skew", "zipfian", "--mix", "read=80,upsert=20"]
CASES = {
    "1h": ("100,000 operations/s x 1 h", ["--arrival-rate", "100000", "-t", "1h", "--emulator-account-rate", "200000"]),
    "10m": ("1,000,000 operations/s x 10 min", ["--arrival-rate", "1000000", "-t", "10m", "--emulator-account-rate", "2000000"]),
}
LIMIT_S, LIMIT_MB = 60.0, 1024.0


def measure(args: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        began = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "loadtest", "simulate", *DESIGN, *args, "--out", out],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - began
        results = json.loads((Path(out) / "results.json").read_text()) if child.returncode in (0, 3) else {}
        sizes = sum(f.stat().st_size for f in Path(out).iterdir())
    return {
        "exit": child.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "simulation_s": results.get("simulation", {}).get("elapsed_s", 0.0),
        "operations": results.get("simulation", {}).get("operations", 0),
        "keys": results.get("simulation", {}).get("keys", 0),
        "outputs_mb": sizes / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="default: both")
    chosen = parser.parse_args().case or list(CASES)
    print(f"{'case':<34}{'wall s':>8}{'cpu s':>8}{'sim s':>8}{'peak MB':>9}{'keys':>8}{'outputs MB':>11}  within")
    for name in chosen:
        label, args = CASES[name]
        m = measure(args)
        within = m["exit"] in (0, 3) and m["wall_s"] < LIMIT_S and m["peak_mb"] < LIMIT_MB
        print(
            f"{label:<34}{m['wall_s']:>8.1f}{m['cpu_s']:>8.1f}{m['simulation_s']:>8.1f}{m['peak_mb']:>9.0f}"
            f"{m['keys']:>8,}{m['outputs_mb']:>11.1f}  {'yes' if within else 'NO'} (< {LIMIT_S:.0f} s, < {LIMIT_MB:.0f} MB;"
            f" {m['operations']:,} operations, exit {m['exit']})",
            flush=True,
        )


if __name__ == "__main__":
    main()
