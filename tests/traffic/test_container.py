"""Which archived log blobs ``loadtest traffic --from-container`` reads, told by their names (the blobs themselves are
read from Azurite's blob service in ``test_traffic``)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from loadtest.traffic import container
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


def test_a_log_blob_named_with_a_dot_segment_is_passed_by_not_fetched_as_another(monkeypatch):
    """``table/../../other/x.log`` in the logs' container: its URL resolves to container ``other``, blob ``x.log``
    (urllib3 removes dot segments), a blob outside what was named; a name with a control character is no archive's
    either. Each is passed by and counted, not read."""
    good = "table/2026/11/24/1400/000000.log"
    listed = [good, "table/../../other/x.log", "table/2026/11/24/1400/./000001.log", "table/2026/11/24/1400/a\nb.log"]
    client = SimpleNamespace(
        exists=lambda: True, list_blobs=lambda name_starts_with: [SimpleNamespace(name=n, size=9) for n in listed]
    )
    monkeypatch.setattr(container, "open_container", lambda *args, **kwargs: client)
    blobs = container.LogBlobs(["logs"], prefix="", since=None, until=None, connection_string="", account_url="", timeout=5)
    assert blobs.names() == [f"logs/{good}"]
    assert blobs.passed == {"named with a '.' or '..' segment or a control character (no archive's name)": 3}
