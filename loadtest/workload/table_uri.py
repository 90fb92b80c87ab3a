"""What a Table service URI names: an entity's keys in its address, the one PartitionKey a query's filter reads.

Read where the wire or the logs give a request's URI: the throttling emulator charges an entity's partition from its
address, and ``loadtest traffic`` attributes a logged request to its partition the same way.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

from .query_reach import Reach, reach_of

__all__ = [
    "ENTITY_OPERATIONS",
    "POINT_PATTERN",
    "category_of",
    "entity_keys",
    "filter_partition",
    "filter_reach",
    "operation_name",
    "table_of",
]

#: The service's names of entity operations (its logs' ``OperationName``), with the op class the targets count them in:
#: reads are GETs, every write (a batch's included) a PUT.
ENTITY_OPERATIONS = {
    "QueryEntity": "GET",
    "QueryEntities": "GET",
    "InsertEntity": "PUT",
    "InsertOrMergeEntity": "PUT",
    "InsertOrReplaceEntity": "PUT",
    "UpdateEntity": "PUT",
    "MergeEntity": "PUT",
    "DeleteEntity": "PUT",
    "EntityGroupTransaction": "PUT",
}

#: An entity's address, ``(PartitionKey='a',RowKey='b')``, quotes doubled inside a key (``loadtest traffic`` cuts the
#: plainly written ones from a block's URIs by array arithmetic, ``traffic.attribution.addressed``, and reads the rest so).
POINT_PATTERN = r"\(PartitionKey='(?P<pk>(?:[^']|'')*)',\s*RowKey='(?P<rk>(?:[^']|'')*)'\)"
_POINT = re.compile(POINT_PATTERN)
_TABLE = re.compile(r"^([A-Za-z][A-Za-z0-9]{2,62})(?:\(|$)")


def entity_keys(address: str) -> tuple[str, str] | None:
    """(PartitionKey, RowKey) of an entity's address, ``…/table(PartitionKey='a',RowKey='b')``, percent-decoded (a
    doubled quote is one), or None."""
    found = _POINT.search(address)
    return (found.group(1).replace("''", "'"), found.group(2).replace("''", "'")) if found else None


def filter_reach(query: str) -> Reach | None:
    """The key range a query string's ``$filter`` selects (no filter: the whole table), or None (one this parser
    cannot read)."""
    where = next((value for name, value in parse_qsl(query, keep_blank_values=True) if name == "$filter"), None)
    if not where:
        return Reach()
    try:
        return reach_of(where)
    except (ValueError, IndexError):
        return None


def filter_partition(query: str) -> str | None:
    """The one PartitionKey a query string's ``$filter`` reads (``PartitionKey eq 'a'`` among its ``and`` terms), or
    None (no filter, a range of partitions, or one this parser cannot read)."""
    reach = filter_reach(query)
    return reach.partition if reach is not None else None


def table_of(uri: str) -> str:
    """The table a request's URI names (its path's last segment before any key), or "" (the table list, a batch)."""
    path = unquote(urlsplit(uri).path)
    last = path.rstrip("/").rpartition("/")[2]
    found = _TABLE.match(last)
    return found.group(1) if found and found.group(1) not in ("Tables", "batch") else ""


def operation_name(method: str, path: str, *, if_match: bool = False) -> str:
    """The service's name for a request (as its logs name it) from its method, its percent-decoded path and whether it
    carries ``If-Match`` (an update or merge of an existing entity; without it, an upsert)."""
    last = path.rstrip("/").rpartition("/")[2]
    if last == "$batch":
        return "EntityGroupTransaction"
    if last == "Tables" or last.startswith("Tables("):
        return {"GET": "QueryTables", "POST": "CreateTable", "DELETE": "DeleteTable"}.get(method, "TableOperation")
    point = entity_keys(path) is not None
    if method == "GET":
        return "QueryEntity" if point else "QueryEntities"
    if method == "POST":
        return "InsertEntity"
    if method == "PUT":
        return "UpdateEntity" if if_match else "InsertOrReplaceEntity"
    if method in ("MERGE", "PATCH"):
        return "MergeEntity" if if_match else "InsertOrMergeEntity"
    if method == "DELETE":
        return "DeleteEntity"
    return f"{method}Request"


def category_of(operation: str) -> str:
    """The diagnostic logs' category of an operation: StorageRead, StorageWrite or StorageDelete."""
    if operation.startswith(("Query", "Get")):
        return "StorageRead"
    return "StorageDelete" if operation.startswith("Delete") else "StorageWrite"
