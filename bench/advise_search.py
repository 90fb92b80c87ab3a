"""``loadtest advise`` at production scale: the whole command's wall time, CPU time and peak memory, for a workload of
100,000 operations/s (the default mix) over an hour, under every key design the tool offers, and an hour of traffic
over 100,000 partitions replayed at a peak of 100,000 operations/s.

Each case runs as a user runs it (``python -m loadtest advise ... --out DIR``, results.json and report.html included)
in a child process of its own, measured by ``os.wait4`` (that child's own CPU time and peak resident memory). The goal
the issue sets: the search under 60 s on this 2-core machine. Printed beside each: the number of designs probed over
the simulator's demand, against the N that trying every N one by one would have had to reach.

    .venv/bin/python bench/advise_search.py            # every case
    .venv/bin/python bench/advise_search.py --case guid
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

from replay_day import profile  # bench/ is the script's own folder on sys.path

ROOT = Path(__file__).resolve().parent.parent
HOUR = 3600
GOAL_S = 60.0
RATE = ["--arrival-rate", "100000"]
CASES = {
    "single": ["--key-strategy", "single"],
    "set-1000-zipfian": ["--key-strategy", "set:1000", "--skew", "zipfian"],
    "hash-prefix-16": ["--key-strategy", "hash-prefix:16"],
    "template": ["--key-strategy", "template:{tenant:50}__{day:7}"],
    "guid": ["--key-strategy", "guid", "--seed-entities", "100000"],
    "append-only": ["--key-strategy", "append-only"],
    "prepend-only": ["--key-strategy", "prepend-only"],
    "timestamp": ["--key-strategy", "timestamp:yyyyMMddHHmm"],
    "traffic-1h-100k-partitions": [],  # the profile's path is added when it is written
}


def hour_profile(path: Path) -> Path:
    """An hour of traffic over 100,000 partitions at 20,000 requests/s, flat (``replay_day``'s profile maker)."""
    return profile(path, 100_000, 20_000, span=HOUR, diurnal=False)


def measure(args: list[str], out: Path) -> dict[str, float]:
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", "advise", *args, "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"advise {' '.join(args)} exited {os.waitstatus_to_exitcode(status)}")
    advice = json.loads((out / "results.json").read_text())["advice"]
    probes = sum(len(d["curve"]) for d in advice["designs"])
    largest = max((d["n"] for d in advice["designs"] if d.get("fits")), default=0)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "search_s": advice["search_s"],
        "probes": probes,
        "largest_n": largest,
        "chosen": advice["chosen"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=list(CASES), action="append")
    chosen = parser.parse_args().case or list(CASES)
    worst = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for name in chosen:
            args = [*CASES[name], *RATE]
            if name.startswith("traffic"):
                args = ["--traffic", str(hour_profile(Path(folder) / "hour.json")), *RATE]
            m = measure(args, Path(folder) / name)
            worst = max(worst, m["wall_s"])
            blind = f"{m['largest_n']:,} one by one" if m["largest_n"] > 1 else "none to size"
            print(
                f"{name:28} {m['wall_s']:6.1f} s wall ({m['wall_s'] / GOAL_S:5.1%} of the {GOAL_S:.0f} s goal), "
                f"{m['cpu_s']:6.1f} s CPU, {m['peak_mb']:6.0f} MB peak; search {m['search_s']:5.2f} s, "
                f"{m['probes']} designs probed (largest N that fits: {blind}); chosen {m['chosen'] or 'none'}",
                flush=True,
            )
    print(f"slowest case: {worst:.1f} s, {worst / GOAL_S:.1%} of the goal ({'within' if worst < GOAL_S else 'OVER'} it)")


if __name__ == "__main__":
    main()
