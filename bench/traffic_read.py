"""``loadtest traffic`` over generated logs: records a second read, and the process's peak memory, per form.

Writes N records in the documented forms (the diagnostic archive's JSON lines, as the emulator writes them, and the
classic Storage Analytics form) over a skewed key set, then runs the real command on each in a child process (as a user
runs it) and prints the records a second and the child's peak resident memory. The issue's goal: 10 million records
in under 60 s and 1 GB.

    .venv/bin/python bench/traffic_read.py [--records 300000] [--keys 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loadtest.emulator.request_log import log_time
from loadtest.service.log_forms import CLASSIC_FIELDS as FIELDS

ROOT = Path(__file__).resolve().parent.parent


def write(folder: Path, records: int, keys: int) -> dict[str, Path]:
    """The same records in each form: 3,000 a second, point reads and upserts, keys drawn from a Pareto skew."""
    rng = random.Random(1)
    names = [f"k{i:06d}" for i in range(keys)]
    start = 1_795_525_445.0
    paths = {"diagnostic": folder / "PT1H.json", "classic": folder / "000000.log"}
    with paths["diagnostic"].open("w") as diagnostic, paths["classic"].open("w") as classic:
        for i in range(records):
            key = names[min(int(rng.paretovariate(1.2)) - 1, keys - 1)]
            read = rng.random() < 0.8
            status = 503 if rng.random() < 0.02 else 200 if read else 204
            operation = "QueryEntity" if read else "InsertOrReplaceEntity"
            uri = f"https://acct.table.core.windows.net/orders(PartitionKey='{key}',RowKey='{i}')"
            when = log_time(start + i / 3000)
            record = {
                "time": when, "operationName": operation, "statusCode": status,
                "statusText": "ServerBusy" if status == 503 else "Success", "durationMs": 4, "uri": uri,
                "correlationId": f"r{i}", "properties": {"clientRequestId": f"c{i}", "serverLatencyMs": 3,
                "requestBodySize": 0 if read else 900, "responseBodySize": 900 if read else 0,
                "metricResponseType": "ServerBusyError" if status == 503 else "Success"},
            }  # fmt: skip
            diagnostic.write(json.dumps(record, separators=(",", ":")) + "\n")
            values = {
                "version": "1.0", "request-start-time": when, "operation-type": operation,
                "request-status": "ThrottlingError" if status == 503 else "Success", "http-status-code": str(status),
                "end-to-end-latency-in-ms": "4", "server-latency-in-ms": "3", "request-url": f'"{uri}"',
                "request-id-header": f"r{i}", "operation-count": "0", "response-header-size": "300",
                "response-packet-size": "1200" if read else "300", "request-content-length": "0" if read else "900",
                "user-agent-header": '"azsdk-python-data-tables/12.7.0"', "client-request-id": f"c{i}",
            }  # fmt: skip
            classic.write(";".join(values.get(name, "") for name in FIELDS) + "\n")
    return paths


def measure(path: Path, out: Path) -> tuple[float, int, str]:
    """(seconds, peak resident KB, the command's first line) of ``loadtest traffic path``."""
    began = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "loadtest", "traffic", str(path), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - began
    peak_kb = int(re.findall(r"^(\d+)$", done.stderr, re.M)[-1])
    return elapsed, peak_kb, done.stdout.splitlines()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--keys", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = write(Path(folder), args.records, args.keys)
        for form, path in paths.items():
            elapsed, peak_kb, said = measure(path, Path(folder) / f"out-{form}")
            rate = args.records / elapsed
            print(
                f"{form:>10}: {args.records:,} records ({path.stat().st_size / 2**20:,.0f} MiB) in {elapsed:.1f} s, "
                f"{rate:,.0f} records/s, peak {peak_kb / 1024:,.0f} MiB; 10 million at this pace: "
                f"{10_000_000 / rate:,.0f} s (goal 60 s)\n            {said}"
            )


if __name__ == "__main__":
    main()
