"""A block's partitions cut from its URIs' bytes (``addressed``) are what ``partition_of`` reads one record at a time:
plain addresses cut, every other form left to it (doubled quotes, percent-encoding, spaces, queries, no address)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from loadtest.counting.buckets import UNATTRIBUTED
from loadtest.traffic.attribution import addressed, attribute, partition_of
from loadtest.traffic.columns import COLUMNS

BASE = "https://acct.table.core.windows.net/orders"
URIS = [
    f"{BASE}(PartitionKey='k1',RowKey='r1')",
    f"{BASE}(PartitionKey='',RowKey='')",
    f"{BASE}(PartitionKey='it''s',RowKey='r')",
    f"{BASE}(PartitionKey='k',RowKey='o''clock')",
    f"{BASE}(PartitionKey='a%2Fb',RowKey='1')",
    f"{BASE}(PartitionKey='k2', RowKey='r')",
    f"{BASE}(PartitionKey='k3',RowKey='r')?$select=Name",
    f"{BASE}(PartitionKey='k4',RowKey='r'",
    f"{BASE}(PartitionKey='k5'",
    f"{BASE}()?$filter=PartitionKey%20eq%20'q'",
    f"{BASE}?$filter=PartitionKey eq 'q' and RowKey ge 'a'",
    f"{BASE}(PartitionKey='k%',RowKey='r')",
    "https://acct.table.core.windows.net/$batch",
    f"{BASE}(PartitionKey='ключ',RowKey='r')",
    "",
    None,
]


def test_plain_addresses_are_cut_and_the_rest_left_to_the_one_record_reader():
    cut = addressed(pa.array(URIS, pa.string())).to_pylist()
    assert cut[:2] == ["k1", ""] and cut[6] == "k3" and cut[13] == "ключ"
    for uri, key in zip(URIS, cut, strict=True):
        if key is not None:  # cut: what the record reader reads
            assert partition_of("QueryEntity", uri, "") == (key, "point"), uri
    assert [cut[i] for i in (2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15)] == [None] * 12
    for nothing in ([], ["", ""], [None]):  # a block of table operations may log no URI at all
        assert addressed(pa.array(nothing, pa.string())).to_pylist() == [None] * len(nothing)


@pytest.mark.parametrize("seed", range(3))
def test_a_blocks_partitions_are_each_records_own(seed):
    rng = random.Random(seed)
    uris = [rng.choice(URIS[:-1]).replace("k1", f"k{rng.randrange(50)}") for _ in range(500)]
    operations = [rng.choice(("QueryEntity", "QueryEntities", "UpdateEntity", "InsertEntity")) for _ in uris]
    columns = {name: [None] * len(uris) for name in COLUMNS.names}
    records = pa.table(
        columns | {"time": [0.0] * len(uris), "operation": operations, "uri": uris, "object_key": [""] * len(uris)},
        schema=COLUMNS,
    )
    block = attribute(records.slice(7), entity_bytes=1000)  # a block that does not start its buffers
    for uri, operation, partition, reach in zip(
        uris[7:], operations[7:], block["partition"].to_pylist(), block["reach"].to_pylist(), strict=True
    ):
        want, kind = partition_of(operation, uri, "")
        assert (partition, reach) == (UNATTRIBUTED if want is None else want, kind), uri
