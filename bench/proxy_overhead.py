"""The throttling emulator's overhead per request against direct Azurite, measured side by side in one run.

Point reads of one entity, alternating direct and through the emulator (budgets far above the
load, so nothing is throttled), several rounds each: prints the median latency both ways and
their ratio. The machines are noisy: only the ratio within this run means anything.

    .venv/bin/python bench/proxy_overhead.py [--reads 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.account.endpoint import resolve_target
from loadtest.emulator.budgets import Budgets
from loadtest.testbed.table import TestTable


def timed_reads(client, reads: int) -> list[float]:
    out = []
    for _ in range(reads):
        start = time.perf_counter()
        client.get_entity("hot", "1")
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with EmbeddedAzurite() as azurite:
        direct = resolve_target(connection_string=azurite.connection_string)
        proxied = direct.behind_emulator(Budgets(partition_rate=10**9, account_rate=10**9))
        try:
            table = TestTable.open(direct)
            clients = {"direct": direct.table(table.name), "emulator": proxied.table(table.name)}
            clients["direct"].upsert_entity({"PartitionKey": "hot", "RowKey": "1", "v": 1})
            for client in clients.values():
                timed_reads(client, 100)  # warm up connections
            samples: dict[str, list[float]] = {"direct": [], "emulator": []}
            for _ in range(args.rounds):
                for name, client in clients.items():
                    samples[name] += timed_reads(client, args.reads // args.rounds)
            table.drop()
        finally:
            proxied.emulator.stop()
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name, value in medians.items():
        print(f"{name:<9} median point read {value:.3f} ms over {len(samples[name]):,} reads")
    print(
        f"emulator / direct: {medians['emulator'] / medians['direct']:.2f}x "
        f"(+{medians['emulator'] - medians['direct']:.3f} ms per request)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
