"""What a run-hour writes, and how fast its report re-renders: ``loadtest simulate`` for an hour over 50 tracked keys,
each output's size, then ``loadtest report`` on the folder (wall time and peak memory of each command).

    .venv/bin/python bench/hour_outputs.py [--hours 1] [--keys 50] [--rate 5000]

The design: ``hash-prefix:KEYS`` keys, zipfian reads and upserts (80/20), so every key is busy every second, GET and
PUT. The simulator keeps its ``simulation.TRACKED`` hottest keys apart, as many as a run keeps (``counts.TOP_K``), the
rest as other partitions: the rows printed say how many were kept. Each command runs as a user runs it, in a child process
measured by ``os.wait4``. The goals the issue sets, at 50 keys kept apart: at most 20 MB of outputs per run-hour, the
report re-rendered in under 10 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from loadtest.outputs import SERIES_FILE

ROOT = Path(__file__).resolve().parent.parent
LIMIT_MB, LIMIT_S = 20.0, 10.0


def timed(*args: str) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of ``python -m loadtest ARGS``, which must exit 0 or 3 (a --fail-on)."""
    began = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "loadtest", *args], cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) not in (0, 3):
        raise SystemExit(f"loadtest {args[0]} exited {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--keys", type=int, default=50)
    parser.add_argument("--rate", type=int, default=5000, help="operations/s asked for (default 5000)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        design = ["--key-strategy", f"hash-prefix:{options.keys}", "--skew", "zipfian", "--mix", "read=80,upsert=20"]
        duration = f"{round(options.hours * 3600)}s"
        wall, peak = timed("simulate", *design, "--arrival-rate", str(options.rate), "-t", duration, "--out", out)
        design_said = f"{options.hours:g} h of hash-prefix:{options.keys} at {options.rate:,}/s"
        print(f"simulate, {design_said}: {wall:.1f} s, {peak:,.0f} MB peak")
        series = pq.read_metadata(Path(out) / SERIES_FILE)
        kept = pq.read_table(Path(out) / SERIES_FILE, columns=["partition"]).column("partition").unique()
        print(f"  {series.num_rows:,} rows, {len(kept)} partitions apart (other partitions among them)")
        sizes = {p.name: p.stat().st_size / 1e6 for p in sorted(Path(out).iterdir()) if p.is_file()}
        for name, mb in sizes.items():
            print(f"  {name:<20} {mb:8.2f} MB")
        total = sum(sizes.values())
        per_hour = total / options.hours
        print(f"  {'all outputs':<20} {total:8.2f} MB: {per_hour:.2f} MB per run-hour (goal at most {LIMIT_MB:g})")
        wall, peak = timed("report", out)
        print(f"report re-rendered: {wall:.1f} s, {peak:,.0f} MB peak (goal under {LIMIT_S:g} s)")
        ok = per_hour <= LIMIT_MB and wall < LIMIT_S
        print("within the goals" if ok else "OVER A GOAL")


if __name__ == "__main__":
    main()
