"""The test table's lifecycle (the docs' steps 1 and 2): a unique name, create, seed, read back, delete.

The tool never writes to a table it did not create unless the user names it with
``--table NAME --reuse-table``; then every RowKey it writes starts with a prefix of this run's
own (``rows``), so no row of the user's is changed, and at the end it removes those rows instead
of the table. Engines of one run (``--run-id``) share a table: whichever creates it, none deletes
it; the rows are seeded once under the run's prefix (``seeds``), by the engine that claims the
seeding first (``seeding_claim``), and each engine writes and removes only its own (``rows``). Every step goes to the
service itself, past any emulator; the rows are written by ``seeding``.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, replace

from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError, ServiceResponseError
from azure.data.tables import TableClient, TableEntity

from ..account.endpoint import Target
from ..account.failures import SDK_ERRORS, explain
from ..exit_codes import RunError
from ..service.entities import MAX_BATCH_OPERATIONS, EntityShape
from ..service.error_codes import ServiceError
from ..service.operations import OPERATIONS
from ..workload.keys import KeyStrategy
from .seeding import batch_client, write_seeded

__all__ = ["TestTable", "digest", "remove_run", "run_prefix", "run_table_name", "unique_table_name"]

log = logging.getLogger(__name__)
DELETE = OPERATIONS["delete"]


def unique_table_name() -> str:
    """Letters and digits only, starting with a letter, unique per run."""
    return f"pstress{time.strftime('%Y%m%d%H%M%S')}{secrets.token_hex(3)}"


def run_table_name(run_id: str) -> str:
    """The table the engines of ``run_id`` share when no --table is given: the same name on every engine."""
    return f"pstress{digest(run_id, 16)}"


def run_prefix(run_id: str) -> str:
    """What every RowKey a ``--run-id`` run writes in its shared table starts with (seeded rows, the engines' own,
    the seeding records): the mark of that run's rows."""
    return f"ps{digest(run_id)}-"


def digest(text: str, size: int = 6) -> str:
    """A short, stable mark of ``text`` (the same on every engine) for table names and RowKey prefixes."""
    return hashlib.sha256(text.encode()).hexdigest()[:size]


@dataclass(kw_only=True)
class TestTable:
    """The test table: created by this run (deleted at the end unless kept) or named and reused."""

    __test__ = False  # not a pytest class

    target: Target
    name: str
    created: bool = False
    seeded: int = 0
    unique: bool = False  # a name made up by this run
    rows: str = ""  # in a reused or shared table: the prefix of every RowKey this run writes ("" in a table of its own)
    seeds: str = ""  # in a shared table: the prefix of the run's seeded RowKeys, which every engine reads

    @property
    def seeded_prefix(self) -> str:
        """What the seeded RowKeys start with: the run's in a shared table, else this run's own prefix (or none)."""
        return self.seeds or self.rows

    @classmethod
    def named(cls, target: Target, name: str = "") -> TestTable:
        """The table to use: ``name``, or a new unique one (which only this run can have created)."""
        return cls(target=target, name=name or unique_table_name(), unique=not name)

    @classmethod
    def open(cls, target: Target, *, name: str = "", reuse: bool = False) -> TestTable:
        """Create a new table (a unique name, or ``name`` if free) or open ``name`` with ``reuse``."""
        table = cls.named(target, name)
        table.create(reuse=reuse)
        return table

    def create(self, *, reuse: bool = False) -> None:
        """Create the table, or check that a reused one exists.

        A unique name counts as created from the moment it is asked for: stopped mid-request, the run
        may have made it, and dropping it harms nobody. A table named by the user is this run's only
        once the service says it created it.
        """
        service = self.target.admin.service()
        try:
            if reuse:
                try:
                    service.get_table_client(self.name).get_table_access_policy()
                except ResourceNotFoundError:
                    raise RunError(f"--reuse-table: table {self.name!r} does not exist") from None
                self.rows = f"ps{secrets.token_hex(3)}-"
                log.info("Reusing table %s: this run writes RowKeys starting with %r only", self.name, self.rows)
                return
            self.created = self.unique
            try:
                service.create_table(self.name)
            except ResourceExistsError:
                self.created = False
                raise RunError(
                    f"table {self.name!r} exists and this run did not create it: pass --reuse-table to write to it"
                ) from None
            self.created = True
        except RunError:
            raise
        except SDK_ERRORS as err:
            # refused (credentials, a wrong account) or never sent (nothing listens): not created, nothing to delete;
            # sent but unanswered (a timeout) may have made it
            self.created = self.created and isinstance(err, ServiceResponseError)
            raise explain(err, self.target) from err

    def share(self, run_id: str, engine: str) -> None:
        """Join the table of a run several engines share: create it if absent (whichever engine is first); never this
        engine's to delete. Seeded rows go under the run's prefix, this engine's own under its prefix inside it."""
        try:
            self.target.admin.service().create_table(self.name)
            log.info("Created the shared table %s for run %s", self.name, run_id)
        except ResourceExistsError:
            log.info("Joined the shared table %s of run %s", self.name, run_id)
        except SDK_ERRORS as err:
            raise explain(err, self.target) from err
        self.created = False
        self.seeds = run_prefix(run_id)
        self.rows = f"{self.seeds}e{digest(engine)}-"  # 'e': never a seeded RowKey's first character (a digit)

    def seed(self, keys: KeyStrategy, count: int, shape: EntityShape, *, progress: bool = True) -> int:
        """Write the strategy's ``count`` seeded entities (``seeding``), counting them in ``seeded`` as they are
        acknowledged."""
        self.seeded = 0
        with closing(write_seeded(self.target, self.name, keys, count, shape, progress=progress)) as writes:
            for written in writes:
                self.seeded += written
        return self.seeded

    def count(self, partition_key: str | None = None) -> int:
        """Entities in the table (or one partition), read back through the service."""
        with self.target.admin.table(self.name, retries=3) as client:
            if partition_key is None:
                rows = client.list_entities(select=["RowKey"])
            else:
                rows = client.query_entities("PartitionKey eq @pk", parameters={"pk": partition_key}, select=["RowKey"])
            return sum(1 for _ in rows)

    def keys(self) -> set[tuple[str, str]]:
        """Every (PartitionKey, RowKey) this run can have written, seeded rows included: one read, for the integrity
        check (in a shared table, the whole run's rows: the seeded ones and every engine's)."""
        with self.target.admin.table(self.name, retries=3) as client:
            return {(row["PartitionKey"], row["RowKey"]) for row in self._rows_under(client, self.seeded_prefix)}

    @staticmethod
    def _rows_under(client: TableClient, prefix: str) -> Iterator[TableEntity]:
        """The whole table, or the rows whose RowKey starts with ``prefix`` (a table scan either way)."""
        if not prefix:
            return client.list_entities(select=["PartitionKey", "RowKey"])
        bounds = {"low": prefix, "high": prefix + "~"}  # "~" sorts after every character a RowKey here uses
        return client.query_entities("RowKey ge @low and RowKey lt @high", parameters=bounds, select=["PartitionKey", "RowKey"])

    def drop(self, timeout: float | None = None) -> None:
        """Delete the table if this run created it, or the rows it wrote in a reused one, waiting at most
        ``timeout`` (default ``--timeout``) for each answer."""
        admin = replace(self.target.admin, timeout=min(timeout, self.target.timeout)) if timeout else self.target.admin
        if not self.created:
            if self.rows:
                self._remove_own_rows(admin)
            return
        try:
            admin.service().delete_table(self.name)  # a table that is not there is not an error
            self.created = False
        except SDK_ERRORS as err:
            log.warning("could not delete test table %s: %s", self.name, explain(err, self.target))

    def _remove_own_rows(self, admin: Target) -> None:
        """Delete every row under this run's prefix, 100 to an entity group transaction, as seeding wrote them."""
        try:
            with admin.table(self.name, retries=3) as client:
                by_partition: dict[str, list[str]] = defaultdict(list)
                for row in self._rows_under(client, self.rows):
                    by_partition[row["PartitionKey"]].append(row["RowKey"])
            batches = [
                [(DELETE, {"PartitionKey": pk, "RowKey": rk}) for rk in rks[start : start + MAX_BATCH_OPERATIONS]]
                for pk, rks in by_partition.items()
                for start in range(0, len(rks), MAX_BATCH_OPERATIONS)
            ]
            client = batch_client(admin, self.name)
            try:
                for batch in batches:
                    client.batch(batch)
            finally:
                client.close()
        except (ServiceError, *SDK_ERRORS) as err:
            log.warning("could not remove the rows under %r from table %s: %s", self.rows, self.name, explain(err, self.target))
            return
        removed = sum(len(batch) for batch in batches)
        log.info("Removed the %d rows this run wrote under RowKey prefix %r from table %s", removed, self.rows, self.name)
        self.rows = ""


def remove_run(target: Target, run_id: str, *, table: str = "") -> str:
    """``loadtest cleanup``: what a ``--run-id`` run left on purpose, asked for by the run's id, never guessed. Its
    shared table (``run_table_name``, or ``table`` as it was given with ``--table``) is deleted when every row in it is
    the run's (or, named for the run, it is empty); beside rows of others, only the run's rows go. A table without a
    row of the run's is never touched. Says what was removed; a ``RunError`` when nothing matches."""
    name, prefix = table or run_table_name(run_id), run_prefix(run_id)
    asked = f"--run-id {run_id}" + (f" --table {table}" if table else "")
    outside = {"low": prefix, "high": prefix + "~"}
    try:
        with target.admin.table(name, retries=3) as client:
            ours = next(iter(TestTable._rows_under(client, prefix)), None) is not None
            rows = client.query_entities("RowKey lt @low or RowKey ge @high", parameters=outside, select=["RowKey"])
            others = next(iter(rows), None) is not None
    except ResourceNotFoundError:
        raise RunError(f"{asked}: no table {name} on this account: nothing of run {run_id} to remove") from None
    except SDK_ERRORS as err:
        raise explain(err, target) from err
    if not ours and (others or table):
        raise RunError(f"{asked}: table {name} holds no row of run {run_id} (RowKeys under {prefix!r}): not touched")
    if others:
        shared = TestTable(target=target, name=name, rows=prefix)
        shared._remove_own_rows(target.admin)
        if shared.rows:  # its warning said why
            raise RunError(f"{asked}: the rows of run {run_id} in table {name} could not all be removed")
        return f"Removed the rows of run {run_id} (RowKeys under {prefix!r}) from table {name}; kept it: it holds others"
    try:
        target.admin.service().delete_table(name)
    except SDK_ERRORS as err:
        raise explain(err, target) from err
    return f"Deleted table {name}, the shared table of run {run_id}"
