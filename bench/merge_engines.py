"""``loadtest merge`` over many engines: its time and peak memory for 10, 100 and 400 engines of one run.

The engines are made from one real engine's output (a short ``loadtest run`` against the embedded Azurite over
``--keys`` hashed PartitionKeys, or ``--engine FOLDER``), stretched to ``--seconds``: each second a copy of one the
real run counted, in turn (its buckets and samples; the per-second latency histograms of the last ten minutes and a
minute's for each minute before, the service's and the open loop's, as an engine keeps them). Engine i is named
``engine-i`` and counts 1, 2 or 3 times the real counts, so the engines differ; each is a folder as a run writes it,
results.json with its buckets.parquet beside. Each merge runs as a user runs it, ``python -m loadtest merge FOLDERS
--out M``, in a child whose resident memory, its worker processes' with it, is sampled for its peak; then the
merged requests and entities are checked against the sum of the engines' counts, which they must equal exactly.

    .venv/bin/python bench/merge_engines.py [--engines 10,100,400] [--seconds 3600] [--keys 50] [--engine FOLDER]

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
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

from loadtest.counting import bucket_frame
from loadtest.counting.buckets import COUNTERS
from loadtest.counting.latency import PER_SECOND_FOR_S, ROLLUP_S  # an engine keeps the last ten minutes per second
from loadtest.results import series_frame
from loadtest.results.mergeable import sample_columns

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = "engine-placeholder-0123456789"
GOAL_S, GOAL_MB = 60, 2048


def real_engine(keys: int, work: Path) -> Path:
    """One engine's folder from a short real run against the embedded Azurite."""
    out = work / "real"
    args = ["run", "-t", "6s", "-u", "10", "-r", "10", "--arrival-rate", "400", "--key-strategy", f"hash-prefix:{keys}"]
    done = subprocess.run(
        [sys.executable, "-m", "loadtest", *args, "--engine", "real", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"the real engine's run failed ({done.returncode}): {done.stderr[-2000:]}")
    return out


def stretched(real: dict, buckets: pd.DataFrame, seconds: int, times: int) -> tuple[dict, pd.DataFrame]:
    """The real engine over ``seconds``, its counts ``times`` over, named ``PLACEHOLDER``: (results.json, buckets)."""
    data = copy.deepcopy(real)
    metrics = data["mergeable"]["metrics"]
    real_seconds = sorted(buckets["second"].unique().tolist())
    start, n = real_seconds[0], len(real_seconds)
    # each stretched second k is a copy of real second k % n: the rows of that second, in turn
    by_second = {second: np.flatnonzero(buckets["second"].to_numpy() == second) for second in real_seconds}
    picks = [by_second[real_seconds[k % n]] for k in range(seconds)]
    frame = buckets.iloc[np.concatenate(picks)].reset_index(drop=True)
    frame["second"] = np.repeat(np.arange(start, start + seconds), [len(p) for p in picks])
    for name in COUNTERS:
        frame[name] = frame[name] * times
    for name in ("partition", "op_class"):
        frame[name] = frame[name].astype(object)
    encoded: dict[tuple[str, str], str] = {}
    for kind in ("latency", "corrected"):
        for _, op_class, histogram in metrics.get(kind, ()):
            encoded.setdefault((kind, op_class), histogram)
    recent = range(max(0, seconds - PER_SECOND_FOR_S), seconds)
    minutes = range(0, recent.start - recent.start % ROLLUP_S, ROLLUP_S)
    for kind in ("latency", "corrected"):
        metrics[kind] = [[start + k, op, h] for (kd, op), h in encoded.items() if kd == kind for k in recent]
        metrics[f"{kind}_minutes"] = [[start + m, op, h] for (kd, op), h in encoded.items() if kd == kind for m in minutes]
    samples = sample_rows(data["mergeable"]["samples"])
    kept = sample_columns({start + k: samples[real_seconds[k % n]] for k in range(seconds) if real_seconds[k % n] in samples})
    metrics["buckets"] = {"file": "buckets.parquet", "rows": len(frame)}
    metrics["clock"] = {**metrics["clock"], "started": float(start), "stopped": float(start + seconds)}
    data["mergeable"]["samples"] = kept
    data["mergeable"]["engine"] = data["run"]["settings"]["engine"] = PLACEHOLDER
    data["run"]["duration_s"] = float(seconds)
    data["account"]["entities"] *= times
    return data, frame


def sample_rows(given: dict | list) -> dict[int, dict]:
    """An engine's samples, as columns or as (second, sample) pairs (results.json before the columns), by second."""
    if isinstance(given, list):
        return {int(second): sample for second, sample in given}
    rows = {}
    for i, second in enumerate(given["second"]):
        row = {"users": given["users"][i]} | {k: given[k][i] for k in ("cpu", "machine_cpu") if given[k][i] is not None}
        for group in ("in_flight", "workers_cpu", "servers_cpu"):
            if named := {name: column[i] for name, column in given[group].items() if column[i] is not None}:
                row[group] = named
        rows[second] = row
    return rows


def measured_merge(folders: list[Path], out: Path) -> tuple[float, float, int]:
    """(wall seconds, peak MB, exit status) of ``loadtest merge FOLDERS --out OUT`` in a child. The peak is the most
    the child and its worker processes held together, resident (sampled every 20 ms, with psutil): the kernel's own
    peak (``wait4``) is the largest single process's, not their sum."""
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", "merge", *map(str, folders), "--out", str(out)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    peak, sampler = [0], threading.Thread(target=_sample_tree, args=(child.pid,), daemon=True)
    sampler.peak = peak  # type: ignore[attr-defined]
    sampler.start()
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - began
    sampler.join()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"merge of {len(folders)} engines failed ({child.returncode}): {child.stderr.read()[-2000:]!r}")
    return took, max(peak[0], usage.ru_maxrss * 1024) / 2**20, child.returncode


def _sample_tree(pid: int) -> None:
    """The most resident memory a process and its children held together, into this thread's ``peak``."""
    peak = threading.current_thread().peak  # type: ignore[attr-defined]
    try:
        parent = psutil.Process(pid)
        while parent.status() != psutil.STATUS_ZOMBIE:
            total = 0
            for process in [parent, *parent.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    pass
            peak[0] = max(peak[0], total)
            time.sleep(0.02)
    except psutil.Error:
        return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="10,100,400", help="how many engines to merge, each count in turn")
    parser.add_argument("--seconds", type=int, default=3600, help="each engine's run length")
    parser.add_argument("--keys", type=int, default=50, help="PartitionKeys of the real run (hash-prefix)")
    parser.add_argument("--engine", type=Path, help="a real engine's folder (else a short run makes one)")
    args = parser.parse_args()
    counts = sorted(int(n) for n in args.engines.split(","))
    work = Path(tempfile.mkdtemp(prefix="merge-bench-"))
    try:
        folder = args.engine or real_engine(args.keys, work)
        real = json.loads((folder / "results.json").read_text())
        buckets = bucket_frame.read_table(folder / "buckets.parquet").to_pandas()
        variants = [stretched(real, buckets, args.seconds, times) for times in (1, 2, 3)]
        texts = [json.dumps(data) for data, _ in variants]
        files = []
        for i, (_, frame) in enumerate(variants):
            files.append(work / f"buckets-{i}.parquet")
            bucket_frame.write(frame, files[-1])
        sums = [[int(frame[name].sum()) for name in ("requests", "entities")] for _, frame in variants]
        keys = variants[0][1]["partition"].nunique()
        size = (len(texts[0]) + files[0].stat().st_size) / 2**20
        print(f"one engine: {args.seconds:,} s, {keys} partitions, {len(variants[0][1]):,} buckets; {size:,.1f} MB of files")
        folders = []
        for i in range(max(counts)):
            folder = work / f"engine-{i:03d}"
            folder.mkdir()
            (folder / "results.json").write_text(texts[i % 3].replace(PLACEHOLDER, f"engine-{i:03d}"))
            shutil.copy(files[i % 3], folder / "buckets.parquet")
            folders.append(folder)
        worst = 0.0, 0.0
        for n in counts:
            took, peak, code = measured_merge(folders[:n], work / f"merged-{n}")
            merged = series_frame.read(work / f"merged-{n}" / "series.parquet")
            got = [int(merged[name].sum()) for name in ("requests", "entities")]
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
