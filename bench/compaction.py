"""What the counts' compaction costs the generator once a second, side by side in one run: as it is (each judged
second's keys read for the ends of the key order, ``key_edges``, and for the keys hot in it, ``HOT_SHARE``; each folded
key's counts summed apart, ``folded_totals``) against the same counts with the first two left out (compaction as it
was before them), and with the folded counts left out. Not per request: the listener's ``on_request`` is
untouched; compaction runs once a second in the master's process, beside the users.

Fires synthetic request events for ``--seconds`` simulated seconds, ``--rate`` a second, over ``--keys`` keys (or a new
key each second, ``--ordered``), compacting once a second as a run does, and prints the microseconds of compaction per
event and the ratios to compaction without the two readings and without the folded counts (the machines are noisy:
compare the ratios).

    .venv/bin/python bench/compaction.py [--seconds 60] [--rate 15000] [--keys 1000000] [--ordered]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loadtest.counting.counts import RunCounts  # noqa: E402
from loadtest.counting.folded_totals import FoldedTotals  # noqa: E402
from loadtest.counting.key_edges import KeyEdges  # noqa: E402


class Before(RunCounts):
    """Compaction without the ends of the key order and the hot keys: the counts before them."""

    def __init__(self) -> None:
        super().__init__()
        self.edges = _NoEdges()

    def _heat(self, judged: list) -> None:
        return None


class _NoEdges(KeyEdges):
    def add_buckets(self, buckets) -> None:  # type: ignore[no-untyped-def]
        for _ in buckets:
            pass


class _NoTotals(FoldedTotals):
    def add(self, partition, op_class, bucket, kept) -> None:  # type: ignore[no-untyped-def]
        return None


class Untotalled(RunCounts):
    """Compaction without each folded key's counts summed apart: the counts before ``folded_totals``."""

    def __init__(self) -> None:
        super().__init__()
        self.folded = _NoTotals()


def run(counts: RunCounts, args: argparse.Namespace) -> float:
    """Seconds spent compacting, over the whole span."""
    rng, spent = random.Random(7), 0.0
    for second in range(args.seconds):
        for i in range(args.rate):
            key = f"{second:08d}" if args.ordered else f"k{rng.randrange(args.keys):07d}"
            bucket = counts.bucket(second, key, "PUT" if i % 4 == 0 else "GET")
            bucket.requests += 1
            bucket.offered += 1
            bucket.entities += 1
            counts.seen(key, 1)
        began = time.perf_counter()
        counts.compact(now=second)
        spent += time.perf_counter() - began
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--rate", type=int, default=15_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--ordered", action="store_true", help="a new key each second (timestamp keys)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    events = args.seconds * args.rate
    best = {"before": float("inf"), "untotalled": float("inf"), "now": float("inf")}
    for _ in range(args.rounds):  # alternated, the best of each: the machine's noise falls on each
        best["before"] = min(best["before"], run(Before(), args))
        best["untotalled"] = min(best["untotalled"], run(Untotalled(), args))
        best["now"] = min(best["now"], run(RunCounts(), args))
    for name, spent in best.items():
        print(f"{name:>10}: {spent * 1e6 / events:6.2f} us of compaction per event ({spent:.2f} s for {events:,} events)")
    print(f"  ratio: {best['now'] / best['before']:.2f}x compaction as it was")
    print(f"  ratio: {best['now'] / best['untotalled']:.2f}x compaction without the folded counts summed apart")


if __name__ == "__main__":
    main()
