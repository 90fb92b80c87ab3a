"""A day's charts: the time the report's charts take over a day of one-second rows (a simulated day, or production
logs of a day), drawn as the report draws them (each line a point a minute, ``time_axis.line_binned``) and second by
second beside it, in one run.

    .venv/bin/python bench/day_charts.py [--hours 24] [--keys 8]

The issue's goal: a day's report renders in under 5 s of chart time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers import run_info  # noqa: E402
from synthetic import recorded  # noqa: E402

from loadtest.report import charts  # noqa: E402
from loadtest.results.summary import build  # noqa: E402

LIMIT_S = 5.0


def day_results(hours: int, keys: int):
    """Results whose series is ``hours`` of seconds over ``keys`` partitions, GET and PUT (a busy second each hour)."""
    results = build(recorded({0: [{"op": "read", "entities": 3}]}), run_info())
    template, seconds = results.timeseries.iloc[0], hours * 3600
    rows = []
    rng = np.random.default_rng(1)
    for k in range(keys):
        for op_class in ("GET", "PUT"):
            frame = pd.DataFrame({column: [template[column]] * seconds for column in results.timeseries.columns})
            frame["t"], frame["second"] = np.arange(seconds), template["second"] + np.arange(seconds)
            frame["partition"], frame["op_class"] = f"k{k}", op_class
            frame["entities"] = rng.poisson(20, seconds)
            frame.loc[frame["t"] % 3600 == 1800, "entities"] = 900
            rows.append(frame)
    results.timeseries = pd.concat(rows, ignore_index=True).astype(results.timeseries.dtypes.to_dict())
    return results


def timed(results) -> float:
    began = time.perf_counter()
    charts.all_charts(results)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--keys", type=int, default=8)
    args = parser.parse_args()
    results = day_results(args.hours, args.keys)
    timed(results)  # imports and font caches warm
    binned = timed(results)
    whole = charts.line_binned
    charts.line_binned = lambda table, **_: (table, 1)  # every second a point, as before
    try:
        each = timed(results)
    finally:
        charts.line_binned = whole
    print(
        f"{args.hours} h x {args.keys} keys ({len(results.timeseries):,} rows): charts {binned:.2f} s a point a minute, "
        f"{each:.2f} s a point a second ({each / binned:.1f}x); goal under {LIMIT_S:.0f} s: "
        f"{'met' if binned < LIMIT_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
