"""The recommended design's key function as code the application can paste: Python (azure-data-tables) and C#
(Azure.Data.Tables), the same keys from both, and the read path it implies.

The bucket of a spread key is a stable hash of the RowKey (the first four bytes of its SHA-256, big-endian, modulo N):
the same in every process and language, unlike Python's ``hash`` or .NET's ``GetHashCode``.
"""

from __future__ import annotations

import json

from ..workload.key_templates import bucket_key
from .designs import Design

__all__ = ["MOST_LISTED", "key_code"]

#: Hot keys the sharding code lists by name; past these, it writes every key over the buckets (no worse for any key).
MOST_LISTED = 1000


def _literal(text: str) -> str:
    """A string literal both languages read as ``text`` (JSON's escapes are Python's and C#'s)."""
    return json.dumps(text, ensure_ascii=True)


def key_code(design: Design) -> dict[str, str]:
    """{"python": ..., "csharp": ...} for ``design`` ("" for both when the design keeps the keys as they are)."""
    writer = _WRITERS.get(design.family)
    if writer is None:
        return {"python": "", "csharp": ""}
    python, csharp = writer(design)
    return {"python": python, "csharp": csharp}


def _shard(design: Design) -> tuple[str, str]:
    n, width = design.n, len(bucket_key("", design.n - 1, design.n)) - 1  # the bucket a zero-padded prefix (``bucket_key``)
    listed = len(design.spread_keys) <= MOST_LISTED
    hot = ", ".join(_literal(k) for k in design.spread_keys) if listed else ""
    py_hot, cs_hot = ("key in HOT", "Hot.Contains(key)") if listed else ("True", "true")
    py_set = f"HOT = {{{hot}}}" if listed else f"# over {MOST_LISTED:,} keys are hot: every key is written over the buckets"
    cs_set = f"static readonly HashSet<string> Hot = new() {{ {hot} }};" if listed else f"// {py_set[2:]}"
    python = f'''import hashlib

BUCKETS = {n}
{py_set}


def bucket(row_key: str) -> int:
    """A stable bucket from the RowKey: the same in every process (Python's hash() is not)."""
    return int.from_bytes(hashlib.sha256(row_key.encode("utf-8")).digest()[:4], "big") % BUCKETS


def partition_key(key: str, row_key: str) -> str:
    """Where an entity of logical key `key` is stored: a hot key's entities over BUCKETS partitions, the bucket a
    prefix (a suffix would keep them adjacent in one range partition until the service splits it)."""
    return f"{{bucket(row_key):0{width}d}}-{{key}}" if {py_hot} else key


def partition_keys(key: str) -> list[str]:
    """Every partition a range scan of `key` reads: query each (in parallel) and merge the answers by RowKey."""
    return [f"{{i:0{width}d}}-{{key}}" for i in range(BUCKETS)] if {py_hot} else [key]
'''
    csharp = f"""using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

static class Keys
{{
    const int Buckets = {n};
    {cs_set}

    // A stable bucket from the RowKey: the same in every process (string.GetHashCode is not).
    static int Bucket(string rowKey) =>
        (int)(BinaryPrimitives.ReadUInt32BigEndian(SHA256.HashData(Encoding.UTF8.GetBytes(rowKey))) % Buckets);

    // Where an entity of logical key `key` is stored: a hot key's entities over Buckets partitions.
    public static string PartitionKey(string key, string rowKey) =>
        {cs_hot} ? $"{{Bucket(rowKey):D{width}}}-{{key}}" : key;

    // Every partition a range scan of `key` reads: query each (in parallel) and merge the answers by RowKey.
    public static IEnumerable<string> PartitionKeys(string key) =>
        {cs_hot} ? Enumerable.Range(0, Buckets).Select(i => $"{{i:D{width}}}-{{key}}") : new[] {{ key }};
}}
"""
    return python, csharp


def _hash_prefix(design: Design) -> tuple[str, str]:
    n = design.n
    python = f'''import hashlib

PREFIXES = {n}


def partition_key(row_key: str) -> str:
    """A stable prefix from the RowKey (000 ...): every entity spread over PREFIXES partitions."""
    return f"{{int.from_bytes(hashlib.sha256(row_key.encode('utf-8')).digest()[:4], 'big') % PREFIXES:03d}}"


def row_key(key: str, row: str) -> str:
    """The logical key leads the RowKey, so a scan of one key is a RowKey range in each prefix."""
    return f"{{key}}|{{row}}"


def partition_keys() -> list[str]:
    """Every prefix a scan of one logical key reads: query each (in parallel) and merge by RowKey."""
    return [f"{{i:03d}}" for i in range(PREFIXES)]
'''
    csharp = f"""using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

static class Keys
{{
    const int Prefixes = {n};

    // A stable prefix from the RowKey (000 ...): every entity spread over Prefixes partitions.
    public static string PartitionKey(string rowKey) =>
        (BinaryPrimitives.ReadUInt32BigEndian(SHA256.HashData(Encoding.UTF8.GetBytes(rowKey))) % Prefixes).ToString("D3");

    // The logical key leads the RowKey, so a scan of one key is a RowKey range in each prefix.
    public static string RowKey(string key, string row) => $"{{key}}|{{row}}";

    // Every prefix a scan of one logical key reads: query each (in parallel) and merge by RowKey.
    public static IEnumerable<string> PartitionKeys() => Enumerable.Range(0, Prefixes).Select(i => i.ToString("D3"));
}}
"""
    return python, csharp


def _finer(design: Design) -> tuple[str, str]:
    n = design.n
    python = f'''import hashlib

VALUES = {n}


def partition_key(entity_id: str) -> str:
    """One of VALUES keys from the entity's own identity (a stable hash)."""
    return f"k{{int.from_bytes(hashlib.sha256(entity_id.encode('utf-8')).digest()[:4], 'big') % VALUES:07d}}"
'''
    csharp = f"""using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

static class Keys
{{
    const int Values = {n};

    // One of Values keys from the entity's own identity (a stable hash).
    public static string PartitionKey(string entityId) =>
        "k" + (BinaryPrimitives.ReadUInt32BigEndian(SHA256.HashData(Encoding.UTF8.GetBytes(entityId))) % Values).ToString("D7");
}}
"""
    return python, csharp


def _seconds_first(design: Design) -> tuple[str, str]:
    del design  # one form whatever the workload
    python = '''from datetime import datetime, timezone


def partition_key(at: datetime) -> str:
    """Seconds first (ssyyyyMMddHHmm): consecutive seconds land on 60 places in key order, not at its end."""
    return at.astimezone(timezone.utc).strftime("%S%Y%m%d%H%M")
'''
    csharp = """static class Keys
{
    // Seconds first (ssyyyyMMddHHmm): consecutive seconds land on 60 places in key order, not at its end.
    public static string PartitionKey(DateTimeOffset at) => at.UtcDateTime.ToString("ssyyyyMMddHHmm");
}
"""
    return python, csharp


def _guid(design: Design) -> tuple[str, str]:
    del design  # one form whatever the workload
    python = '''import uuid


def partition_key() -> str:
    """A key per entity: keep it where the application finds the entity again (a point read needs it)."""
    return str(uuid.uuid4())
'''
    csharp = """static class Keys
{
    // A key per entity: keep it where the application finds the entity again (a point read needs it).
    public static string PartitionKey() => Guid.NewGuid().ToString();
}
"""
    return python, csharp


def _accounts(design: Design) -> tuple[str, str]:
    n = design.n
    python = f'''import hashlib

from azure.data.tables import TableServiceClient

# one connection string per account, from your secret store (never in code)
ACCOUNTS: list[TableServiceClient] = []  # {n} of them


def account_for(partition_key: str) -> TableServiceClient:
    """A partition's account: a stable hash of its PartitionKey over the {n} accounts."""
    digest = hashlib.sha256(partition_key.encode("utf-8")).digest()
    return ACCOUNTS[int.from_bytes(digest[:4], "big") % len(ACCOUNTS)]
'''
    csharp = f"""using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;
using Azure.Data.Tables;

static class Accounts
{{
    // one client per account ({n}), from your secret store (never in code)
    public static TableServiceClient[] Clients = Array.Empty<TableServiceClient>();

    // A partition's account: a stable hash of its PartitionKey over the accounts.
    public static TableServiceClient For(string partitionKey)
    {{
        var hash = BinaryPrimitives.ReadUInt32BigEndian(SHA256.HashData(Encoding.UTF8.GetBytes(partitionKey)));
        return Clients[(int)(hash % (uint)Clients.Length)];
    }}
}}
"""
    return python, csharp


_WRITERS = {
    "shard": _shard,
    "hash-prefix": _hash_prefix,
    "finer": _finer,
    "seconds-first": _seconds_first,
    "guid": _guid,
    "accounts": _accounts,
}
