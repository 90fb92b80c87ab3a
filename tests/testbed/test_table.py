"""The test table's lifecycle against a real Azurite: create, count, reuse, drop, and what a run left removed."""

import os

import pytest
from helpers import in_process, tables

from loadtest.exit_codes import RunError
from loadtest.service.entities import EntityShape
from loadtest.testbed.seeding_claim import seed_once
from loadtest.testbed.table import TestTable, run_prefix, run_table_name
from loadtest.workload.key_specs import key_strategy


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


@pytest.mark.parametrize("where", ["wrong key", "nothing listening"])
def test_a_table_the_service_refused_or_never_got_is_not_deleted_afterwards(azurite, where, caplog):
    """Only the real error is shown: no "could not delete test table" warning before it for a table never made."""
    from loadtest.account.azurite import azurite_connection_string
    from loadtest.account.endpoint import resolve_target
    from loadtest.child_process import free_port
    from loadtest.redact import AZURITE_KEY

    if where == "wrong key":
        connection_string = azurite.connection_string.replace(AZURITE_KEY, "V3Jvbmc" + "A" * 81 + "==")
    else:
        connection_string = azurite_connection_string(free_port())  # a loopback port nobody listens on
    table = TestTable.named(resolve_target(connection_string=connection_string, timeout=5), "")
    with pytest.raises(RunError):
        table.create()
    assert not table.created
    table.drop()
    assert "could not delete" not in caplog.text


# --- loadtest cleanup: what a --run-id run left, asked for by its id ------------------------------------------------


def _left_by_run(target, run_id: str, *, table: str = "") -> TestTable:
    """A shared table as a --run-id run's engines leave it: joined (created by the first), seeded once under the run's
    prefix, with the seeding's record."""
    shared = TestTable.named(target, table or run_table_name(run_id))
    shared.share(run_id, "e1")
    keys = key_strategy("single", default_key="hot", rows=shared.seeded_prefix)
    seed_once(shared, keys, 30, EntityShape.for_size(200), seeding="s", engine="e1")
    return shared


def _cleanup(monkeypatch, azurite, *args: str):
    return in_process(monkeypatch, "cleanup", *args, env={"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string})


def test_cleanup_deletes_the_table_a_run_left_and_no_other_runs(monkeypatch, azurite, target):
    run_id, other = f"left-{os.getpid()}", f"other-{os.getpid()}"
    left, kept = _left_by_run(target, run_id), _left_by_run(target, other)
    try:
        code, out, err = _cleanup(monkeypatch, azurite, "--run-id", run_id)
        assert code == 0 and out.strip() == f"Deleted table {left.name}, the shared table of run {run_id}", err
        assert left.name not in tables(target) and kept.count("hot") == 30
    finally:
        TestTable(target=target, name=kept.name, created=True).drop()


def test_cleanup_of_a_run_id_that_matches_nothing_says_so(monkeypatch, azurite, target):
    before = tables(target)
    code, out, err = _cleanup(monkeypatch, azurite, "--run-id", "no-such-run")
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert f"--run-id no-such-run: no table {run_table_name('no-such-run')} on this account: nothing" in err
    assert tables(target) == before


def test_cleanup_never_touches_a_named_table_without_the_runs_rows(monkeypatch, azurite, table):
    table.seed(key_strategy("single"), 20, EntityShape.for_size(200), progress=False)
    code, _, err = _cleanup(monkeypatch, azurite, "--run-id", "r9", "--table", table.name)
    assert code == 1 and f"table {table.name} holds no row of run r9" in err and "not touched" in err, err
    assert table.count() == 20


def test_cleanup_of_a_named_table_holding_other_rows_removes_only_the_runs(monkeypatch, azurite, table, target):
    table.seed(key_strategy("single"), 20, EntityShape.for_size(200), progress=False)  # the user's own rows
    _left_by_run(target, "r10", table=table.name)
    assert table.count() == 20 + 30 + 1  # the run's seeded rows and its seeding record
    code, out, err = _cleanup(monkeypatch, azurite, "--run-id", "r10", "--table", table.name)
    assert code == 0 and f"Removed the rows of run r10 (RowKeys under {run_prefix('r10')!r})" in out, err
    assert table.name in tables(target) and table.count() == 20
