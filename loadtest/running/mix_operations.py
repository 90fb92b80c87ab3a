"""The built-in mix's operations: one ``TableUser`` method for each operation ``--mix`` may name, marked with the
operation it performs, and the books they keep (the entities a user inserted, which its deletes remove)."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from itertools import accumulate
from typing import TYPE_CHECKING

from ..service.entities import FILTERED
from ..service.operations import MIX_OPERATIONS, OPERATIONS

if TYPE_CHECKING:
    from ..options.settings import Settings
    from ..session.table_session import TableSession
    from ..workload.keys import KeyStrategy

__all__ = ["OWN_ROWS_KEPT", "PERFORMERS", "MixOperations"]

#: How many of its own inserted entities a user remembers for deletes.
OWN_ROWS_KEPT = 10_000
FILTER = f"{FILTERED} lt 5"  # filtered scans return one row in twenty: a query density of 5 %


def performs(operation: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Marks the method that performs a mix operation (a name of ``operations.OPERATIONS``)."""

    def mark(method: Callable[..., None]) -> Callable[..., None]:
        method.performs = OPERATIONS[operation].name  # type: ignore[attr-defined]
        return method

    return mark


class MixOperations:
    """``TableUser``'s mix operations. They address what the user's key strategy and skew choose (``existing``,
    ``new_keys``, ``entity``: the user's, also for tasks of your own) through its ``table``."""

    # the user's, which the operations use
    table: TableSession
    keys: KeyStrategy
    settings: Settings
    rng: random.Random
    _seeded: int
    _new_row: Callable[[], str]
    existing: Callable[[], tuple[str, str]]
    new_keys: Callable[[], tuple[str, str]]
    entity: Callable[[str, str], dict]

    def _keep_books(self, settings: Settings) -> None:
        """What the operations keep across calls: the projection, the batch mix, the user's own inserted rows."""
        self._select = list(settings.select) or None
        self._batch_kinds, self._batch_weights = list(settings.batch_mix), list(accumulate(settings.batch_mix.values()))
        self._batch_deletes = "delete" in settings.batch_mix
        self._own: deque[tuple[str, str]] = deque(maxlen=OWN_ROWS_KEPT)

    def _range(self) -> tuple[str, str, str, int]:
        """A RowKey range of up to ``scan_size`` seeded rows in one partition: (pk, low, high, rows known)."""
        pk, _ = self.existing()
        rows, size = self.keys.scanned(pk, self._seeded, self.settings.scan_size)
        start = self.rng.randrange(rows - size + 1)
        return pk, self.keys.row(start), self.keys.row(start + size), size

    # --- one method per mix operation, marked with the operation it performs ----------------

    @performs("read")
    def do_read(self) -> None:
        self.table.read(*self.existing(), select=self._select)

    @performs("scan")
    def do_scan(self) -> None:
        pk, low, high, known = self._range()
        self.table.scan(pk, low, high, page_size=self.settings.scan_size, select=self._select, asked=known)

    @performs("filter-scan")
    def do_filter_scan(self) -> None:
        pk, low, high, known = self._range()
        self.table.scan(pk, low, high, page_size=self.settings.scan_size, select=self._select, where=FILTER, known_rows=known)

    @performs("partition-scan")
    def do_partition_scan(self) -> None:
        low, _ = self.existing()
        self.table.scan_partitions(low, "~", limit=self.settings.scan_size, select=self._select)

    @performs("table-scan")
    def do_table_scan(self) -> None:
        self.table.scan_partitions("", "", limit=self.settings.scan_size, select=self._select)

    @performs("insert")
    def do_insert(self) -> None:
        entity = self.entity(*self.new_keys())
        if self.table.insert(entity) is not None:
            self._own.append((entity["PartitionKey"], entity["RowKey"]))

    @performs("upsert")
    def do_upsert(self) -> None:
        self.table.upsert(self.entity(*self.existing()))

    @performs("replace")
    def do_replace(self) -> None:
        self.table.replace(self.entity(*self.existing()))

    @performs("update")
    def do_update(self) -> None:
        self.table.update(self.entity(*self.existing()))

    @performs("update-etag")
    def do_update_etag(self) -> None:
        """Optimistic concurrency: read, then update only if nobody changed the entity meanwhile.

        Under contention some updates fail with 412 UpdateConditionNotSatisfied: that is the
        design's conflict rate, reported under ERRORS.
        """
        pk, rk = self.existing()
        current = self.table.read(pk, rk)
        if current is not None:
            self.table.update(self.entity(pk, rk), etag=current.metadata["etag"])

    @performs("delete")
    def do_delete(self) -> None:
        if not self._own:
            self.do_insert()
            return
        self.table.delete(*self._own.popleft())

    @performs("batch")
    def do_batch(self) -> None:
        """``batch_size`` operations of ``batch_mix`` kinds on one PartitionKey, each entity once: updates, upserts and
        replaces address the partition's seeded rows while it has them (the table keeps its size, as an application's
        batches of changes do), inserts write new ones, deletes remove the user's own."""
        pk = self.keys.new_partition()
        seeded = self.keys.seeded_rows(pk, self._seeded)
        updatable = self.rng.sample(range(seeded), min(seeded, self.settings.batch_size)) if seeded else []
        # rows of this partition the user inserted itself: only looked up when the batch mix deletes
        mine = [rk for own_pk, rk in self._own if own_pk == pk][: self.settings.batch_size] if self._batch_deletes else []
        operations, deleted, new_rows = [], [], 0
        for kind in self.rng.choices(self._batch_kinds, cum_weights=self._batch_weights, k=self.settings.batch_size):
            if kind in ("update", "upsert", "replace") and updatable:
                operations.append((kind, self.entity(pk, self.keys.row(updatable.pop()))))
            elif kind == "delete" and mine:
                deleted.append(rk := mine.pop())
                operations.append(("delete", {"PartitionKey": pk, "RowKey": rk}))
            else:  # insert, upsert, replace of a new entity (also when nothing is left to update or delete)
                new_rows += 1
                operations.append(
                    (kind if kind in ("insert", "upsert", "replace") else "upsert", self.entity(pk, self._new_row()))
                )
        if self.table.batch(operations, new_rows=new_rows - len(deleted)) is not None:
            if deleted:
                gone = set(deleted)
                self._own = deque(((p, r) for p, r in self._own if not (p == pk and r in gone)), maxlen=OWN_ROWS_KEPT)
            self._own.extend((pk, e["RowKey"]) for kind, e in operations if kind == "insert")


#: Each mix operation's method, by operation: every operation ``--mix`` may name has one (checked on import).
PERFORMERS = {method.performs: name for name, method in vars(MixOperations).items() if hasattr(method, "performs")}
if set(PERFORMERS) != set(MIX_OPERATIONS):  # an operation added to the table needs its method here
    raise ImportError(f"TableUser performs {sorted(PERFORMERS)}, the mix names {sorted(MIX_OPERATIONS)}")
