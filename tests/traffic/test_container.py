"""Which archived log blobs ``loadtest traffic --from-container`` reads, told by their names (the blobs themselves are
read from Azurite's blob service in ``test_traffic``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from loadtest.traffic.container import hour_of, of_tables

ACCOUNT = "resourceId=/subscriptions/s/resourceGroups/g/providers/Microsoft.Storage/storageAccounts/acct"


@pytest.mark.parametrize(
    "name, hour",
    [
        (f"{ACCOUNT}/tableServices/default/y=2026/m=11/d=24/h=14/m=00/PT1H.json", (2026, 11, 24, 14)),
        ("table/2026/11/24/0900/000003.log", (2026, 11, 24, 9)),
        (f"{ACCOUNT}/tableServices/default/y=2026/m=13/d=24/h=14/m=00/PT1H.json", None),  # no such month
        ("exports/storage-table-logs.csv", None),
        ("table/2026/11/24/000003.log", None),
    ],
)
def test_a_blobs_hour_is_read_from_its_archived_name(name, hour):
    assert hour_of(name) == (datetime(*hour, tzinfo=UTC).timestamp() if hour else None)


@pytest.mark.parametrize(
    "name, tables",
    [
        (f"{ACCOUNT}/tableServices/default/y=2026/m=11/d=24/h=14/m=00/PT1H.json", True),
        (f"{ACCOUNT}/blobServices/default/y=2026/m=11/d=24/h=14/m=00/PT1H.json", False),
        (f"{ACCOUNT}/queueServices/default/y=2026/m=11/d=24/h=14/m=00/PT1H.json", False),
        ("table/2026/11/24/1400/000000.log", True),
        ("blob/2026/11/24/1400/000000.log", False),
        ("queue/2026/11/24/1400/000000.log", False),
        ("exports/storage-table-logs.json", True),  # a name in neither form is read
    ],
)
def test_the_other_services_logs_beside_the_tables_are_passed_by(name, tables):
    assert of_tables(name) is tables
