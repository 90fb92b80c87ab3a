"""After the run, check every acknowledged write against the table.

A listener keeps the ledger from the request events: entities whose creation the service
acknowledged (inserts; batch inserts and upserts of new rows) and those whose deletion it
acknowledged. Workers send their ledgers to the master with their last buckets. At the end
the table is read once: an acknowledged entity that is missing is a lost write; a row the
users wrote (their RowKeys carry a user prefix naming the worker) that no acknowledgement covers
is a write the service made but never confirmed (a timeout that had in fact succeeded), unless
its worker was lost before its ledger arrived: those are counted apart. An insert retried
after such a timeout answers 409 EntityAlreadyExists: the client reports it as "succeeded
earlier", not as a failure.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type alone: ``loadtest report`` and ``merge`` import this module without Locust and gevent
    from locust.env import Environment

__all__ = ["Ledger", "user_row_prefix", "verify"]

USER_ROWS = "u"  # the first letter of every RowKey a user writes; seeded RowKeys are digits


def user_row_prefix(worker: int) -> str:
    """A user's RowKey prefix for new entities: ``u<worker>.<random>-`` (unique per user, its worker named)."""
    return f"{USER_ROWS}{worker}.{secrets.token_hex(3)}-"


@dataclass
class Ledger:
    created: set[tuple[str, str]] = field(default_factory=set)
    deleted: set[tuple[str, str]] = field(default_factory=set)
    succeeded_earlier: int = 0
    enabled: bool = True  # off with --skip-verify: the ledger grows with every new entity written

    @classmethod
    def register(cls, environment: Environment) -> Ledger:
        ledger = cls()
        environment.events.request.add_listener(ledger.on_request)
        environment.events.test_start.add_listener(lambda **_: ledger.clear())
        return ledger

    def clear(self) -> None:
        self.created.clear()
        self.deleted.clear()
        self.succeeded_earlier = 0

    def on_request(self, exception: BaseException | None = None, context: dict[str, Any] | None = None, **_: Any) -> None:
        if exception is not None or not context or not self.enabled:
            return
        written = context.get("written")
        if written:
            for kind, pk, rk in written:
                key = (pk, rk)
                if kind == "delete":
                    self.created.discard(key)
                    self.deleted.add(key)
                else:
                    self.created.add(key)
                    self.deleted.discard(key)
        self.succeeded_earlier += context.get("succeeded_earlier", 0)

    def to_dict(self) -> dict[str, Any]:
        return {"created": sorted(self.created), "deleted": sorted(self.deleted), "succeeded_earlier": self.succeeded_earlier}

    def merge(self, data: dict[str, Any]) -> None:
        self.created |= {tuple(k) for k in data.get("created", ())}
        self.deleted |= {tuple(k) for k in data.get("deleted", ())}
        self.created -= self.deleted
        self.succeeded_earlier += data.get("succeeded_earlier", 0)


def verify(ledger: Ledger, rows: set[tuple[str, str]], *, lost_workers: Iterable[int] = (), prefix: str = "") -> dict[str, Any]:
    """Compare the ledger with the table's (PartitionKey, RowKey) pairs; ``lost_workers``: indexes of workers
    whose ledgers never arrived (their rows are theirs, not the service's unconfirmed writes); ``prefix``: the
    run's own RowKey prefix in a reused table."""
    missing = ledger.created - rows
    resurrected = ledger.deleted & rows
    acknowledged = ledger.created | ledger.deleted
    unacknowledged = {key for key in rows if key[1].startswith(prefix + USER_ROWS) and key not in acknowledged}
    lost_prefixes = tuple(f"{prefix}{USER_ROWS}{worker}." for worker in lost_workers)
    of_lost = {key for key in unacknowledged if lost_prefixes and key[1].startswith(lost_prefixes)}
    return {
        "checked": True,
        "acknowledged_writes": len(ledger.created) + len(ledger.deleted),
        "lost": len(missing) + len(resurrected),
        "lost_examples": [list(k) for k in sorted(missing | resurrected)[:5]],
        "unacknowledged": len(unacknowledged - of_lost),
        "by_lost_workers": len(of_lost),
        "succeeded_earlier": ledger.succeeded_earlier,
    }
