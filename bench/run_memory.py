"""A real run's memory against its length: does a 10-minute run hold more than a 2-minute one, beyond its start-up?

Runs ``loadtest run`` as a user runs it, once for each of ``--minutes``, one after the other: an open loop of point
reads and upserts at ``--arrival-rate 200`` through the throttling emulator in front of an embedded Azurite, over
``--keys`` hashed PartitionKeys. The 2-core machine serves that load steadily, so the memory read is the run's
record, not a backlog of operations in flight (which the default job's scans and batches at 400/s build on a slow
machine). The tool's own process's resident memory is read every second (``/proc``, through psutil): once load has
run ``--startup`` seconds (the start-up: imports, Locust, the seeding, the first seconds' buckets), and each minute.
Its peak is the kernel's own high-water mark (``VmHWM``, read every quarter second until the process ends): a sample
a second missed the report's charts, a peak of under a second some 55 MB above what came before, caught in one run
and not in the other. The emulator and Azurite are processes of their own, named apart (Azurite's table
grows with what the mix inserts: not the tool's record).

    .venv/bin/python bench/run_memory.py [--minutes 2,10] [--keys 50] [--startup 30]

The issue's goal: a 10-minute run's memory within 10 % of a 2-minute run's beyond its start-up.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
GOAL = 0.10


def high_water_mb(pid: int) -> float | None:
    """The process's peak resident memory so far, as the kernel keeps it (None once it has exited)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None


def measured(minutes: int, keys: int, startup: float, out: Path) -> dict[str, float]:
    """One run's resident memory in MB: at ``startup`` seconds into its load, its peak (the kernel's high-water mark,
    and that mark at the end of load), and its children's peak (sampled)."""
    args = ["run", "-t", f"{minutes}m", "--arrival-rate", "200", "--mix", "read=80,upsert=20", "--emulate-throttling"]
    args += ["--key-strategy", f"hash-prefix:{keys}", "--out", str(out)]
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", *args], cwd=ROOT, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    tool = psutil.Process(child.pid)
    began, loading, at_startup, peak, load_peak, children = time.monotonic(), None, 0.0, 0.0, 0.0, {}
    timeline: list[float] = []  # at load's start, then each minute of it
    deadline, tick = began + minutes * 60 + 600, 0
    try:
        while child.poll() is None and time.monotonic() < deadline:
            high = high_water_mb(child.pid)
            if high is None:  # the tool has exited
                break
            peak = high
            if loading is not None and time.monotonic() - loading <= minutes * 60:
                load_peak = high
            tick += 1
            if tick % 4 == 1:
                try:
                    rss = tool.memory_info().rss / 2**20
                    kids = tool.children(recursive=True)
                except psutil.Error:  # the tool has exited
                    break
                for kid in kids:
                    try:
                        name = " ".join(kid.cmdline()[:3])[-60:]
                        children[name] = max(children.get(name, 0.0), kid.memory_info().rss / 2**20)
                    except psutil.Error:  # a child that has just exited
                        pass
                # load has started once the emulator and Azurite run: the children's start is a close enough mark
                if loading is None and len(kids) >= 2:
                    loading = time.monotonic()
                since = time.monotonic() - loading if loading is not None else 0.0
                if loading is not None and not at_startup and since >= startup:
                    at_startup = rss
                if at_startup and timeline and since >= len(timeline) * 60:
                    timeline.append(rss)
                elif loading is not None and not timeline:
                    timeline.append(rss)
            time.sleep(0.25)
    finally:
        if child.poll() is None:
            child.kill()
        err = child.communicate()[1]
    if child.returncode not in (0, 3):
        raise SystemExit(f"the {minutes}-minute run failed ({child.returncode}): {err[-2000:]}")
    return {
        "startup": at_startup,
        "peak": peak,
        "load_peak": load_peak,
        "timeline": timeline,
        "children": max(children.values(), default=0.0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", default="2,10", help="run lengths, shortest first, one after the other")
    parser.add_argument("--keys", type=int, default=50, help="PartitionKeys (hash-prefix)")
    parser.add_argument("--startup", type=float, default=30, help="seconds of load counted as start-up")
    args = parser.parse_args()
    lengths = sorted(int(m) for m in args.minutes.split(","))
    figures = {}
    with tempfile.TemporaryDirectory(prefix="run-memory-") as work:
        for minutes in lengths:
            got = figures[minutes] = measured(minutes, args.keys, args.startup, Path(work) / f"{minutes}m")
            print(
                f"{minutes:3d} min: {got['startup']:6.1f} MB after {args.startup:.0f} s of load, peak {got['peak']:6.1f} MB "
                f"(+{got['peak'] - got['startup']:.1f} MB beyond start-up), {got['load_peak']:.1f} MB by the end of load; "
                f"the busiest child's peak {got['children']:.1f} MB; each minute: "
                + " ".join(f"{mb:.0f}" for mb in got["timeline"]),
                flush=True,
            )
    short, long = figures[lengths[0]], figures[lengths[-1]]
    ratio = long["peak"] / short["peak"] - 1
    within = "within" if ratio <= GOAL else "NOT within"
    print(f"{lengths[-1]} min against {lengths[0]} min: peak {ratio:+.1%} ({within} the goal's {GOAL:.0%})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
