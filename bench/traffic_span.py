"""``loadtest traffic`` over the same rate of classic logs for spans of different lengths: the wall time, the peak
memory of the whole command (records read, counted, results.json and the report drawn), and what a longer span costs
beyond a shorter one.

Writes Storage Analytics' layout (``table/YYYY/MM/DD/hh00/000000.log``, an hour a folder) at ``--rate`` requests a
second over ``--keys`` partitions (a Pareto skew: a few hot, a long tail; one request in fifty throttled), then runs
the real command on each span in a child process, as a user runs it, the machine otherwise idle. The issue's goal:
30 days at 10 requests/s over 5,000 partitions under 1 GB and 10 minutes; a week no more than a day plus a stated
per-partition cost.

    .venv/bin/python bench/traffic_span.py [--days 1,7] [--rate 0.5] [--keys 500] [--shape uniform|mixed]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loadtest.emulator.request_log import log_time
from loadtest.service.log_forms import CLASSIC_FIELDS as FIELDS

ROOT = Path(__file__).resolve().parent.parent
START = 1_793_491_200.0  # 2026-11-01T00:00:00Z


#: Keys of many scripts and first characters (the "mixed" shape): each begins a range of its own in key order.
_SCRIPTS = ("cust", "Кли", "客户", "عميل", "לקוח", "zone", "Ωμέγα", "9-", "_x", "ñu")
#: The mixed shape's answers besides success and throttling: the application's 4xx and the service's 5xx.
_ANSWERS = (("ResourceNotFound", "404"), ("EntityAlreadyExists", "409"), ("ConditionNotMet", "412"), ("ServerOtherError", "500"))


def _names(shape: str, keys: int) -> list[str]:
    if shape == "uniform":
        return [f"k{i:05d}" for i in range(keys)]
    return [f"{_SCRIPTS[i % len(_SCRIPTS)]}-{i:04d}" for i in range(keys)]


def _status(rng: random.Random, shape: str, at: float) -> tuple[str, str]:
    """A record's (status text, HTTP status): the uniform shape throttles one in fifty; the mixed one throttles one in
    three in its throttled minutes (ten minutes an hour), and answers 4xx and 5xx now and then."""
    if shape == "uniform":
        return ("ServerBusy", "503") if rng.random() < 0.02 else ("Success", "200")
    if int(at // 60) % 6 == 0 and rng.random() < 0.33:
        return "ServerBusy", "503"
    if rng.random() < 0.04:
        return rng.choice(_ANSWERS)
    return "Success", "200"


def write(folder: Path, days: int, rate: float, keys: int, shape: str = "uniform") -> int:
    """``days`` of classic logs at ``rate`` requests a second over ``keys`` partitions, an hour a folder; the records."""
    rng = random.Random(1)
    names = _names(shape, keys)
    written = 0
    for hour in range(days * 24):
        when = START + hour * 3600
        stamp = time.strftime("%Y/%m/%d/%H00", time.gmtime(when))
        path = folder / "table" / stamp / "000000.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for i in range(rng.randint(int(rate * 3600 * 0.9), int(rate * 3600 * 1.1))):
            at = when + rng.random() * 3600
            key = names[min(int(rng.paretovariate(1.2)) - 1, keys - 1)]
            read, (status, http) = rng.random() < 0.8, _status(rng, shape, at)
            operation = "QueryEntity" if read else "InsertOrReplaceEntity"
            values = {
                "version": "1.0", "request-start-time": log_time(at), "operation-type": operation,
                "request-status": status, "http-status-code": http,
                "end-to-end-latency-in-ms": "4", "server-latency-in-ms": "3",
                "request-url": f'"https://acct.table.core.windows.net/orders(PartitionKey=\'{key}\',RowKey=\'{i}\')"',
                "request-id-header": f"r{hour}-{i}", "operation-count": "0", "response-header-size": "300",
                "response-packet-size": "1200" if read else "300", "request-content-length": "0" if read else "900",
                "user-agent-header": '"azsdk-python-data-tables/12.7.0"', "client-request-id": f"c{hour}-{i}",
            }  # fmt: skip
            lines.append(";".join(values.get(name, "") for name in FIELDS))
        lines.sort(key=lambda line: line.split(";")[1])  # logged in the order requests began
        path.write_text("\n".join(lines) + "\n")
        written += len(lines)
    return written


def measure(logs: Path, out: Path) -> tuple[float, float, str]:
    """(seconds, peak resident MiB, the command's first line) of ``loadtest traffic logs`` in a child process."""
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", "traffic", str(logs), "--out", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**os.environ, "CI": "1"},
    )  # fmt: skip
    said = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) not in (0, 3):
        raise SystemExit(f"loadtest traffic {logs} failed:\n{said}")
    return elapsed, usage.ru_maxrss / 1024, said.splitlines()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", default="1,7", help="comma list of spans in days")
    parser.add_argument("--rate", type=float, default=0.5, help="requests a second")
    parser.add_argument("--keys", type=int, default=500)
    parser.add_argument(
        "--shape",
        choices=("uniform", "mixed"),
        default="uniform",
        help="uniform: one key script, 2 %% throttled; mixed: keys of ten scripts and first characters, throttled "
        "minutes, 4xx and 5xx answers",
    )
    args = parser.parse_args()
    spans = sorted(int(d) for d in args.days.split(","))
    measured = {}
    with tempfile.TemporaryDirectory() as folder:
        for days in spans:
            logs = Path(folder) / f"days-{days}"
            records = write(logs, days, args.rate, args.keys, args.shape)
            elapsed, peak, said = measure(logs / "table", Path(folder) / f"out-{days}")
            measured[days] = (records, elapsed, peak)
            print(f"{days:>3} days: {records:,} records in {elapsed:.1f} s, peak {peak:,.0f} MiB\n      {said}", flush=True)
    first = spans[0]
    for days in spans[1:]:
        extra = measured[days][2] - measured[first][2]
        print(f"{days} days against {first}: {measured[days][1] / measured[first][1]:.2f}x the time, {extra:+,.0f} MiB")


if __name__ == "__main__":
    main()
