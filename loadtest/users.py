"""Locust users that drive one PartitionKey with a weighted mix of table operations.

Subclass ``TableUser`` to describe your own workload; class attributes left at ``None``
take the run's settings (command line, web UI form or environment)::

    class OrdersUser(TableUser):
        partition_key = "orders-2026"
        mix = {"read": 80, "upsert": 20}
        wait_time = constant_throughput(10)   # a fixed offered load per user
"""

from __future__ import annotations

import random
import secrets
from collections import deque
from itertools import accumulate
from typing import Any, ClassVar

from locust import User, constant, task

from .client import TableOperations
from .config import Settings
from .keys import row_key
from .lifecycle import current_run

__all__ = ["TableUser", "HotPartitionUser"]

#: How many of its own inserted RowKeys a user remembers for deletes.
OWN_ROWS_KEPT = 10_000


class TableUser(User):
    """An abstract user aimed at one PartitionKey of the run's test table.

    Class attributes (``None`` = the run's setting):

    - ``partition_key``: the PartitionKey every operation targets.
    - ``mix``: operation -> weight; operations: read, scan, insert, upsert (merge),
      replace (upsert replace), update (merge, If-Match *), delete, batch.
    - ``batch_size``: upserts per entity group transaction (<= 100).
    - ``scan_size``: rows a row range scan asks for.
    - ``wait_time``: Locust's; the default ``constant(0)`` is a closed loop (as fast as
      the service answers); ``constant_throughput(n)`` fixes the offered load.

    Reads, updates and scans address the seeded rows (RowKeys ``0000000000`` up);
    inserts and batches write new RowKeys unique to the user; deletes remove rows the user
    inserted itself (and insert one when it has none yet), so seeded rows stay readable.
    """

    abstract = True
    wait_time = constant(0)

    partition_key: ClassVar[str | None] = None
    mix: ClassVar[dict[str, int] | None] = None
    batch_size: ClassVar[int | None] = None
    scan_size: ClassVar[int | None] = None

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        run = current_run(environment)
        settings: Settings = run.settings
        self.key = self.partition_key if self.partition_key is not None else settings.partition_key
        weights = self.mix if self.mix is not None else settings.mix
        self._ops = [getattr(self, f"do_{name}") for name in weights]
        self._cum_weights = list(accumulate(weights.values()))
        self._batch = self.batch_size or settings.batch_size
        self._scan = self.scan_size or settings.scan_size
        self._shape = settings.shape
        self._seeded = max(1, run.seeded)
        self._prefix = f"u{secrets.token_hex(4)}-"
        self._counter = 0
        self._own: deque[str] = deque(maxlen=OWN_ROWS_KEPT)
        self.table = TableOperations(
            target=run.target,
            table=run.table.name,
            partition_key=self.key,
            request_event=environment.events.request,
            retries=settings.retries,
        )

    def on_stop(self) -> None:
        self.table.close()

    @task
    def one_operation(self) -> None:
        random.choices(self._ops, cum_weights=self._cum_weights)[0]()

    # --- helpers ------------------------------------------------------------------------

    def _seeded_row(self) -> str:
        return row_key(random.randrange(self._seeded))

    def _new_row(self) -> str:
        self._counter += 1
        return f"{self._prefix}{self._counter:010d}"

    # --- one method per operation, named do_<operation> -----------------------------------

    def do_read(self) -> None:
        self.table.read(self._seeded_row())

    def do_scan(self) -> None:
        start = random.randrange(max(1, self._seeded - self._scan + 1))
        self.table.scan(row_key(start), row_key(start + self._scan), page_size=self._scan)

    def do_insert(self) -> None:
        key = self._new_row()
        if self.table.insert(self._shape.entity(self.key, key)) is not None:
            self._own.append(key)

    def do_upsert(self) -> None:
        self.table.upsert(self._shape.entity(self.key, self._seeded_row()))

    def do_replace(self) -> None:
        self.table.replace(self._shape.entity(self.key, self._seeded_row()))

    def do_update(self) -> None:
        self.table.update(self._shape.entity(self.key, self._seeded_row()))

    def do_delete(self) -> None:
        if not self._own:
            self.do_insert()
            return
        self.table.delete(self._own.popleft())

    def do_batch(self) -> None:
        self.table.batch(self._shape.entity(self.key, self._new_row()) for _ in range(self._batch))


class HotPartitionUser(TableUser):
    """Every operation on the run's one PartitionKey: the docs' single-partition stress test."""
