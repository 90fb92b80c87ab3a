"""Writing a table's rows fast, uncounted (seeding is not the load): the seeded entities as entity group transactions
per PartitionKey, ``SEED_CONCURRENCY`` at a time, through the lean REST client (the cheapest path to the service), with
a progress bar on a terminal and one log line elsewhere."""

from __future__ import annotations

import logging
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from gevent.pool import Pool

from ..account.endpoint import Target
from ..account.failures import explain
from ..service.entities import MAX_BATCH_BYTES, MAX_BATCH_OPERATIONS, EntityShape, batch_bytes, filtered_value
from ..service.error_codes import ServiceError
from ..service.operations import OPERATIONS
from ..service.retry import parse_retry
from ..transports.rest import RestTransport
from ..workload.keys import KeyStrategy

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = ["SEED_CONCURRENCY", "batch_client", "write_seeded"]

log = logging.getLogger(__name__)
SEED_CONCURRENCY = 8  # batches in flight: enough to keep a partition server (or Azurite) busy
SEED_RETRY = "exponential:5,0.5,0.1,5"  # seeding a real account may meet throttling: wait it out
UPSERT = OPERATIONS["upsert"]


def batch_client(target: Target, table: str) -> RestTransport:
    """A lean REST client for writes that are not the load (seeding, removing a run's rows): retried through
    throttling, nothing counted."""
    return RestTransport(target=target, table=table, retry=parse_retry(SEED_RETRY), seed=None, hooks=_Quiet())


def write_seeded(
    target: Target, table: str, keys: KeyStrategy, count: int, shape: EntityShape, *, progress: bool = True
) -> Iterator[int]:
    """Write the strategy's ``count`` seeded entities, yielding how many each batch wrote as it is acknowledged.
    Stopped (Ctrl-C) or failed, no batch goes on writing."""
    per_batch = MAX_BATCH_OPERATIONS
    while per_batch > 1 and batch_bytes(shape, per_batch) > MAX_BATCH_BYTES:
        per_batch //= 2
    by_partition: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for i in range(count):
        pk, rk = keys.seeded(i, count)
        by_partition[pk].append((rk, i))
    batches = [
        (pk, rows[start : start + per_batch]) for pk, rows in by_partition.items() for start in range(0, len(rows), per_batch)
    ]
    idle: list[RestTransport] = []  # one keep-alive connection per greenlet, reused batch after batch
    made: list[RestTransport] = []

    def write(batch: tuple[str, list[tuple[str, int]]]) -> int:
        pk, rows = batch
        if not idle:
            made.append(batch_client(target.admin, table))
            idle.append(made[-1])
        client = idle.pop()
        client.batch([(UPSERT, shape.entity(pk, rk, filtered_value(i))) for rk, i in rows])
        idle.append(client)
        return len(rows)

    pool = Pool(SEED_CONCURRENCY)
    writes = pool.imap_unordered(write, batches)
    try:
        with _Progress(progress, count, _which(keys)) as advance:
            for written in writes:
                yield written
                advance(written)
    except ServiceError as err:
        raise explain(err, target) from err
    finally:
        # stopped (Ctrl-C) or failed: no batch goes on writing to a table about to be dropped. The feeder first,
        # or it hands the freed slots new batches, which then meet the dropped table
        writes.kill()
        pool.kill()
        for client in made:
            client.close()


class _Quiet:
    """Seeding's attempt hooks: nothing is counted (seeding is not the load)."""

    def on_attempt(self, status: int, error_code: str | None, message: str = "") -> None:
        pass

    def on_backoff(self, seconds: float) -> None:
        pass


def _which(keys: KeyStrategy) -> str:
    """The seeded keys as a log names them: the PartitionKey itself when there are few (a new test's seeding says
    which key it is for)."""
    partitions = keys.keys()
    if partitions is None:
        return f"a PartitionKey per entity ({keys.spec})"
    if len(partitions) <= 3:
        return "PartitionKey" + ("s " if len(partitions) > 1 else " ") + ", ".join(map(repr, partitions))
    return f"{len(partitions):,} PartitionKeys ({keys.spec})"


class _Progress:
    """A rich progress bar on a terminal, one log line elsewhere."""

    def __init__(self, enabled: bool, total: int, partition_key: str) -> None:
        self.enabled, self.total, self.partition_key = enabled, total, partition_key
        self.bar: Progress | None = None

    def __enter__(self) -> Callable[[int], None]:
        log.info("Seeding %d entities under %s", self.total, self.partition_key)
        if self.enabled and sys.stderr.isatty() and not os.environ.get("CI"):
            from rich.progress import Progress

            self.bar = Progress(transient=True)
            self.bar.start()
            task = self.bar.add_task(f"seeding {self.partition_key}", total=self.total)
            return lambda n: self.bar.advance(task, n)
        return lambda n: None

    def __exit__(self, *exc: object) -> None:
        if self.bar:
            self.bar.stop()
