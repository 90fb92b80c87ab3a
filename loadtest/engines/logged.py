"""Reads of an account's request logs (``loadtest traffic``'s shards: an hour's, a day's) merged: their ``logs``
sections added as one read's, beside the counts ``merge`` adds as it adds engines'."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..results.form import Results
from ..results.rolled_frame import BIN_COLUMN, PAST_A_DAY, binned_leaves_out
from ..service.operations import OpClass

__all__ = ["SHARD_EDGES", "added_logs", "logged_shares"]

#: What a merge of ``loadtest traffic``'s shards adds to what the records leave out.
SHARD_EDGES = (
    "; read in shards and merged: an operation whose retries fell in two shards (within a few minutes of their edge) "
    "is counted in each, and a record the service wrote twice is found only within its shard: shard by whole hours"
)


def _width(merged: Results) -> int:
    frame = merged.timeseries
    return int(frame[BIN_COLUMN].max()) if len(frame) else 1


def added_logs(shards: Sequence[dict[str, Any]], merged: Results) -> dict[str, Any]:
    """Shards' accounts of their records (``Results.logs``) as one read's: every count added, the span from the first
    record to the last, the shares from the merged figures (``logged_shares``), what they leave out as the
    merged span reads it (its bins: ``rolled_frame``)."""

    def added(key: str) -> dict[str, int]:
        return dict(sum((Counter(shard.get(key) or {}) for shard in shards), Counter()))

    examples: dict[str, list[str]] = {}
    errors: dict[str, int] = {}
    for shard in shards:
        for reason, lines in (shard.get("unreadable_examples") or {}).items():
            held = examples.setdefault(reason, [])
            held += lines[: max(0, 3 - len(held))]  # three a reason, as each read keeps
        for error, status in (shard.get("error_status") or {}).items():
            errors.setdefault(error, status)
    first = shards[0]
    unattributed = added("unattributed")
    return {
        "sources": [source for shard in shards for source in shard.get("sources", [])],
        "forms": added("forms"),
        "span": [min(shard["span"][0] for shard in shards), max(shard["span"][1] for shard in shards)],
        "client_request_id": first.get("client_request_id", ""),
        "hashed_keys": first.get("hashed_keys", False),
        "records": sum(int(shard.get("records", 0)) for shard in shards),
        "unattributed": unattributed,
        **logged_shares(merged, unattributed),
        "entity_bytes": first.get("entity_bytes", 0),
        "table_operations": added("table_operations"),
        "passed": added("passed"),
        "unreadable": added("unreadable"),
        "unreadable_examples": examples,
        "error_status": dict(sorted(errors.items())),
        "leaves_out": first.get("leaves_out", "").split(PAST_A_DAY)[0] + binned_leaves_out(_width(merged)) + SHARD_EDGES,
    }


def logged_shares(results: Results, unattributed: Mapping[str, int]) -> dict[str, Any]:
    """What request logs could not tell, as shares of the figures built from them (``traffic``'s, or its shards'
    merged): the operations (their first attempts) whose records name no partition, the entities estimated from
    answers' sizes."""
    requests = sum(row.requests for row in results.partitions if row.op_class != OpClass.ALL)
    entities, estimated = results.account.entities, results.keys.get("estimated_entities", 0)
    return {
        "requests": requests,
        "unattributed_share": round(sum(unattributed.values()) / requests, 4) if requests else 0.0,
        "estimated_share": round(estimated / entities, 4) if entities else 0.0,
    }
