import os

import pytest

from loadtest.backend import (
    AZURITE_KEY,
    EmbeddedAzurite,
    TestTable,
    azurite_connection_string,
    redact,
    resolve_target,
)
from loadtest.entities import EntityShape
from loadtest.errors import RunError
from loadtest.keys import key_strategy


def test_seeded_entities_in_the_table_equal_the_requested_count(table):
    assert table.seed(key_strategy("single"), 1234, EntityShape.for_size(1024), progress=False) == 1234
    assert table.count("hot") == 1234
    assert table.count() == 1234


def test_large_entities_seed_in_batches_under_4_mib(table):
    table.seed(key_strategy("single:big"), 130, EntityShape.for_size(200_000, partition_key="big"), progress=False)
    assert table.count("big") == 130


def test_seeding_follows_the_key_strategy(table):
    table.seed(key_strategy("hash-prefix:8"), 100, EntityShape.for_size(512), progress=False)
    assert table.count() == 100
    assert table.count("000") == 13 and table.count("007") == 12


def test_the_tool_never_takes_over_an_existing_table_unasked(table, target):
    with pytest.raises(RunError, match="pass --reuse-table"):
        TestTable.open(target, name=table.name)
    reused = TestTable.open(target, name=table.name, reuse=True)
    assert not reused.created
    reused.drop()  # a no-op: the run did not create it
    assert TestTable.open(target, name=table.name, reuse=True).name == table.name


def test_reusing_a_missing_table_is_refused(target):
    with pytest.raises(RunError, match="does not exist"):
        TestTable.open(target, name="nosuchtable123", reuse=True)


def test_a_created_table_is_deleted_by_drop(target):
    created = TestTable.open(target)
    created.drop()
    names = [t.name for t in target.service().list_tables()]
    assert created.name not in names


def test_unreachable_endpoint_is_one_clear_error():
    with EmbeddedAzurite() as server:
        port = server.port
    target = resolve_target(connection_string=azurite_connection_string(port))
    with pytest.raises(RunError, match=f"cannot reach http://127.0.0.1:{port}/devstoreaccount1"):
        TestTable.open(target)


def test_a_wrong_account_key_is_refused_without_showing_it(azurite):
    wrong = azurite.connection_string.replace(AZURITE_KEY, "d3JvbmdrZXk" + "A" * 77 + "==")
    with pytest.raises(RunError, match=r"refused the credentials \(403 AuthorizationFailure\)") as caught:
        TestTable.open(resolve_target(connection_string=wrong))
    assert "d3JvbmdrZXk" not in str(caught.value)


def test_embedded_azurite_starts_answers_and_stops_by_pid():
    server = EmbeddedAzurite().start()
    pid = server.pid
    os.kill(pid, 0)  # running
    target = resolve_target(connection_string=server.connection_string)
    TestTable.open(target).drop()
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_no_node_says_how_to_get_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RunError, match="needs Node.js 18\\+ and npm"):
        EmbeddedAzurite().start()


def test_redact_removes_keys_and_signatures():
    text = f"AccountKey={AZURITE_KEY};x AccountKey=abc123; https://a/t?sv=1&sig=s3cr3t&se=2 SharedAccessSignature=sv=1&sig=zz"
    cleaned = redact(text)
    for secret in (AZURITE_KEY, "abc123", "s3cr3t", "sig=zz"):
        assert secret not in cleaned
