"""Who seeds a table the engines of one ``--run-id`` run share: the first engine to create the seeding's record claims
it, touches it while it seeds and marks it seeded; the others wait for it, and take over a record left untouched (its
seeder died). The records live in the table itself, under ``SEEDING_PARTITION``."""

from __future__ import annotations

import logging
import time

import gevent
from azure.core import MatchConditions
from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import TableClient, UpdateMode

from ..account.failures import SDK_ERRORS, explain
from ..service.entities import EntityShape
from ..workload.keys import KeyStrategy
from .table import TestTable, digest

__all__ = ["CLAIM_STALE_S", "SEEDING_PARTITION", "seed_once", "seeding_record"]

log = logging.getLogger(__name__)
#: A shared table's seeding records (one per run and seeding): who seeds, and when it is done. '~' sorts after
#: every key the strategies make.
SEEDING_PARTITION = "~partition-stress-seeding"
CLAIM_BEAT_S = 5.0  # the seeding engine touches its record this often
CLAIM_STALE_S = 30.0  # a record untouched this long is a seeder that died: another engine takes the seeding over


def seeding_record(table: TestTable, seeding: str) -> dict[str, str]:
    """The keys of ``seeding``'s record in a shared table: under the run's prefix, so the run's cleanup removes it."""
    return {"PartitionKey": SEEDING_PARTITION, "RowKey": f"{table.seeds}{digest(seeding, 12)}"}


def seed_once(table: TestTable, keys: KeyStrategy, count: int, shape: EntityShape, *, seeding: str, engine: str) -> int:
    """In a shared table: seed unless another engine has, or is seeding now (then wait for it). The first to
    create the seeding's record seeds and marks it done; a record left untouched for ``CLAIM_STALE_S`` (its
    seeder died) is taken over."""
    record = seeding_record(table, seeding)
    with table.target.admin.table(table.name, retries=3) as client:
        seen: tuple[str, float] | None = None  # the record's etag, and since when
        while True:
            try:
                client.create_entity({**record, "state": "seeding", "engine": engine, "count": count})
                return _seed_claimed(table, client, record, keys, count, shape)
            except ResourceExistsError:
                pass  # another engine's claim
            except SDK_ERRORS as err:
                raise explain(err, table.target) from err
            try:
                current = client.get_entity(record["PartitionKey"], record["RowKey"])
            except ResourceNotFoundError:
                continue  # its seeder gave it up meanwhile: claim it
            except SDK_ERRORS as err:
                raise explain(err, table.target) from err
            if current["state"] == "seeded":
                log.info("Seeded once for the run by engine %s: %d entities", current["engine"], current["count"])
                table.seeded = int(current["count"])
                return table.seeded
            etag = current.metadata["etag"]
            if seen is None or seen[0] != etag:
                if seen is None:
                    log.info("Engine %s is seeding the shared table: waiting for it", current["engine"])
                seen = (etag, time.monotonic())
            elif time.monotonic() - seen[1] > CLAIM_STALE_S:
                log.warning("Engine %s stopped seeding (its record went stale): taking over", current["engine"])
                try:
                    client.delete_entity(current, etag=etag, match_condition=MatchConditions.IfNotModified)
                except (ResourceModifiedError, ResourceNotFoundError):
                    pass  # another engine took over first
                except SDK_ERRORS as err:
                    raise explain(err, table.target) from err
                seen = None
                continue
            gevent.sleep(0.5)


def _seed_claimed(
    table: TestTable, client: TableClient, record: dict[str, str], keys: KeyStrategy, count: int, shape: EntityShape
) -> int:
    """Seed under a claim this engine holds, touching its record meanwhile; marked seeded once done, removed if
    the seeding fails or is stopped, so that another engine can claim it."""
    beat = gevent.spawn(_beat, client, record)
    try:
        seeded = table.seed(keys, count, shape)
    except BaseException:
        beat.kill()
        try:
            client.delete_entity(record["PartitionKey"], record["RowKey"])
        except SDK_ERRORS:
            log.warning("seeding record of %s not removed: other engines wait %.0f s for it", table.name, CLAIM_STALE_S)
        raise
    beat.kill()
    try:
        client.upsert_entity({**record, "state": "seeded", "count": seeded}, mode=UpdateMode.MERGE)
    except SDK_ERRORS as err:
        raise explain(err, table.target) from err
    return seeded


def _beat(client: TableClient, record: dict[str, str]) -> None:
    while True:
        gevent.sleep(CLAIM_BEAT_S)
        try:
            client.upsert_entity({**record, "beat": time.time()}, mode=UpdateMode.MERGE)
        except SDK_ERRORS as err:
            log.debug("seeding record not touched: %s", err)
