"""``loadtest merge`` over many engines: its time and peak memory for 10, 100 and 400 engines of one run.

The engines are made from one real engine's output (a short ``loadtest run`` against the embedded Azurite over
``--keys`` hashed PartitionKeys, or ``--engine results.json``), stretched to ``--seconds``: each second a copy of
one the real run counted, in turn (its buckets, timeseries rows and samples; the per-second latency histograms of the
last ten minutes, as an engine keeps them). Engine i is named ``engine-i`` and counts 1, 2 or 3 times the real
counts, so the engines differ. Each merge runs as a user runs it, ``python -m loadtest merge FOLDERS --out M``, in a
child whose peak resident memory the kernel reports (``wait4``); then the merged requests and entities are checked
against the sum of the engines' counts, which they must equal exactly.

    .venv/bin/python bench/merge_engines.py [--engines 10,100,400] [--seconds 3600] [--keys 50] [--engine PATH]

The issue's goal: 400 engines x 1 hour x 50 keys in under 60 s and 2 GB.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loadtest.buckets import COUNTERS
from loadtest.latency import PER_SECOND_FOR_S  # the latency an engine keeps per second, the rest per minute

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = "engine-placeholder-0123456789"
GOAL_S, GOAL_MB = 60, 2048


def real_engine(keys: int, work: Path) -> dict:
    """One engine's results.json from a short real run against the embedded Azurite."""
    out = work / "real"
    args = ["run", "-t", "6s", "-u", "10", "-r", "10", "--arrival-rate", "400", "--key-strategy", f"hash-prefix:{keys}"]
    done = subprocess.run(
        [sys.executable, "-m", "loadtest", *args, "--engine", "real", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"the real engine's run failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads((out / "results.json").read_text())


def stretched(real: dict, seconds: int, times: int) -> dict:
    """The real engine over ``seconds``, its counts ``times`` over, named ``PLACEHOLDER``."""
    data = copy.deepcopy(real)
    metrics = data["mergeable"]["metrics"]
    by_second: dict[int, list] = {}
    for second, partition, op_class, bucket in metrics["buckets"]:
        by_second.setdefault(second, []).append((partition, op_class, bucket))
    rows: dict[int, list] = {}
    for row in data["timeseries"]:
        rows.setdefault(row["second"], []).append(row)
    latency: dict[int, list] = {}
    for second, op_class, encoded in metrics["latency"]:
        latency.setdefault(second, []).append((op_class, encoded))
    samples = dict((s, sample) for s, sample in data["mergeable"]["samples"])
    real_seconds = sorted(by_second)
    start = real_seconds[0]

    def scaled(counts: dict) -> dict:
        return {**counts, **{name: counts[name] * times for name in COUNTERS if name in counts}}

    buckets, series, kept_latency, kept_samples = [], [], [], []
    for k in range(seconds):
        source = real_seconds[k % len(real_seconds)]
        buckets += [[start + k, p, op, scaled(b)] for p, op, b in by_second[source]]
        series += [{**scaled(r), "t": k, "second": start + k} for r in rows.get(source, ())]
        if k >= seconds - PER_SECOND_FOR_S:
            kept_latency += [[start + k, op, encoded] for op, encoded in latency.get(source, ())]
        if source in samples:
            kept_samples.append([start + k, samples[source]])
    metrics.update(buckets=buckets, latency=kept_latency, corrected=[], latency_minutes=[], corrected_minutes=[])
    metrics["clock"] = {**metrics["clock"], "started": float(start), "stopped": float(start + seconds)}
    data["timeseries"], data["mergeable"]["samples"] = series, kept_samples
    data["mergeable"]["engine"] = data["run"]["settings"]["engine"] = PLACEHOLDER
    data["run"]["duration_s"] = float(seconds)
    data["account"]["entities"] *= times
    return data


def measured_merge(folders: list[Path], out: Path) -> tuple[float, float, int]:
    """(wall seconds, peak resident MB, exit status) of ``loadtest merge FOLDERS --out OUT`` in a child."""
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", "merge", *map(str, folders), "--out", str(out)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - began
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"merge of {len(folders)} engines failed ({child.returncode}): {child.stderr.read()[-2000:]!r}")
    return took, usage.ru_maxrss / 1024, child.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="10,100,400", help="how many engines to merge, each count in turn")
    parser.add_argument("--seconds", type=int, default=3600, help="each engine's run length")
    parser.add_argument("--keys", type=int, default=50, help="PartitionKeys of the real run (hash-prefix)")
    parser.add_argument("--engine", type=Path, help="a real engine's results.json (else a short run makes one)")
    args = parser.parse_args()
    counts = sorted(int(n) for n in args.engines.split(","))
    work = Path(tempfile.mkdtemp(prefix="merge-bench-"))
    try:
        real = json.loads(args.engine.read_text()) if args.engine else real_engine(args.keys, work)
        variants = [stretched(real, args.seconds, times) for times in (1, 2, 3)]
        texts = [json.dumps(v) for v in variants]
        sums = [
            [sum(b[3][name] for b in v["mergeable"]["metrics"]["buckets"]) for name in ("requests", "entities")] for v in variants
        ]
        keys = len({b[1] for b in variants[0]["mergeable"]["metrics"]["buckets"]})
        print(f"one engine: {args.seconds:,} s, {keys} partitions, {len(texts[0]) / 2**20:,.1f} MB of results.json")
        folders = []
        for i in range(max(counts)):
            folder = work / f"engine-{i:03d}"
            folder.mkdir()
            (folder / "results.json").write_text(texts[i % 3].replace(PLACEHOLDER, f"engine-{i:03d}"))
            folders.append(folder)
        worst = 0.0, 0.0
        for n in counts:
            took, peak, code = measured_merge(folders[:n], work / f"merged-{n}")
            merged = json.loads((work / f"merged-{n}" / "results.json").read_text())
            got = [sum(row[name] for row in merged["timeseries"]) for name in ("requests", "entities")]
            want = [sum(sums[i % 3][j] for i in range(n)) for j in (0, 1)]
            exact = "exact" if got == want else f"NOT the engines' sum: {got} against {want}"
            print(f"{n:4d} engines: {took:7.1f} s, peak {peak:7.0f} MB, exit {code}; totals {exact}", flush=True)
            if got != want:
                return 1
            worst = max(worst[0], took), max(worst[1], peak)
        goal = f"400 engines x 1 h x 50 keys in < {GOAL_S} s and < {GOAL_MB} MB"
        print(f"largest: {worst[0]:.1f} s and {worst[1]:,.0f} MB (the goal: {goal})")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
