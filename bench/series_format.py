"""Which columnar file should hold a run's per-second series: size and read time of the same rows side by side.

The rows are the timeseries results.json holds today (one per second, partition and op class: the buckets' counters,
the longest operation, errors and throttling reasons, the latency percentiles, the users), made for ``--seconds`` over
``--keys`` PartitionKeys and the other partitions, GET and PUT, with counts drawn as a skewed closed-loop run has
them (seeded: the same rows every run). Each form is written and read back in this process, one after another, best
of ``--repeat``: JSON as results.json has it (the reference), Parquet (zstd, snappy) and Arrow IPC (zstd, lz4,
uncompressed) through pyarrow. "columns" reads only what a chart needs (second, partition, op class, entities).

    .venv/bin/python bench/series_format.py [--seconds 3600] [--keys 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq

from loadtest.counting.buckets import COUNTERS

CHART = ["second", "partition", "op_class", "entities"]


def rows(seconds: int, keys: int) -> pa.Table:
    """The series as columns: every second has a row per partition (the keys, then ``#other``) and op class."""
    draw = np.random.default_rng(7)
    partitions = [f"key{i:03d}" for i in range(keys)] + ["#other"]
    n = seconds * len(partitions) * 2
    weight = np.tile(np.repeat(1.0 / np.arange(1, len(partitions) + 1) ** 0.9, 2), seconds)
    requests = draw.poisson(40 * weight)
    throttled = draw.binomial(requests, 0.02)
    columns: dict[str, object] = {
        "second": np.repeat(np.arange(1_795_555_456, 1_795_555_456 + seconds), len(partitions) * 2),
        "partition": pa.array(np.tile(np.repeat(partitions, 2), seconds)).dictionary_encode(),
        "op_class": pa.array(np.tile(["GET", "PUT"], seconds * len(partitions))).dictionary_encode(),
    }
    for name in COUNTERS:
        columns[name] = np.zeros(n, dtype=np.int64)
    columns.update(requests=requests, entities=requests - throttled, offered=requests, attempts=requests + throttled)
    columns.update(failures=throttled, throttled=throttled, backoff_ms=throttled * draw.integers(0, 200, n))
    columns["longest_ms"] = draw.integers(2, 60, n)
    busy = ["{}" if t == 0 else json.dumps({"ServerBusy": int(t)}) for t in throttled]
    columns["errors"], columns["throttled_by"] = busy, [b.replace("ServerBusy", "partition") for b in busy]
    p50 = np.round(draw.lognormal(1.0, 0.3, n), 2)
    columns.update(p50_ms=p50, p95_ms=np.round(p50 * 3, 2), p99_ms=np.round(p50 * 5, 2), max_ms=np.round(p50 * 8, 2))
    columns["users"] = np.full(n, 20)
    return pa.table(columns)


def as_json(table: pa.Table, path: Path) -> None:
    records = table.to_pylist()
    for record in records:
        record["errors"], record["throttled_by"] = json.loads(record["errors"]), json.loads(record["throttled_by"])
    path.write_text(json.dumps({"timeseries": records}))


def from_json(path: Path, columns: list[str] | None) -> object:
    records = json.loads(path.read_text())["timeseries"]
    return records if columns is None else {c: [r[c] for r in records] for c in columns}


def parquet(compression: str) -> tuple[str, Callable, Callable]:
    return "parquet", lambda t, p: pq.write_table(t, p, compression=compression), lambda p, c: pq.read_table(p, columns=c)


def arrow(compression: str) -> tuple[str, Callable, Callable]:
    return (
        "arrow",
        lambda t, p: feather.write_feather(t, p, compression=compression),
        lambda p, c: feather.read_table(p, columns=c, memory_map=compression == "uncompressed"),
    )


FORMATS = {
    "JSON (results.json today)": ("json", as_json, from_json),
    "Parquet, zstd": parquet("zstd"),
    "Parquet, snappy": parquet("snappy"),
    "Arrow IPC, zstd": arrow("zstd"),
    "Arrow IPC, lz4": arrow("lz4"),
    "Arrow IPC, none": arrow("uncompressed"),
}


def best(repeat: int, step: Callable[..., object], *args: object) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        step(*args)
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--keys", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = rows(args.seconds, args.keys)
    print(f"{table.num_rows:,} rows ({args.seconds:,} s x {args.keys} keys and the others x GET, PUT), best of {args.repeat}")
    print(f"{'form':28s} {'MB':>8s} {'write s':>8s} {'read s':>8s} {'columns s':>9s}   size and read vs JSON")
    reference: tuple[float, float] | None = None
    with tempfile.TemporaryDirectory() as folder:
        for name, (suffix, write, read) in FORMATS.items():
            path = Path(folder) / f"series.{suffix}"
            wrote = best(1, write, table, path)
            whole = best(args.repeat, read, path, None)
            some = best(args.repeat, read, path, CHART)
            size = path.stat().st_size / 2**20
            reference = reference or (size, whole)
            print(f"{name:28s} {size:8.2f} {wrote:8.2f} {whole:8.3f} {some:9.3f}   "
                  f"{size / reference[0]:6.3f}x {whole / reference[1]:6.3f}x")  # fmt: skip
            path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
