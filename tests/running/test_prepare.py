"""Before the load, in this process: the target reached, the table created and seeded once per distinct seeding,
and everything undone when set-up fails (no table, no child process left)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import tables

from loadtest.exit_codes import RunError
from loadtest.options.settings import Settings, namespace
from loadtest.running.prepare import abandon, next_settings, prepare
from loadtest.running.users import TableUser


class Orders(TableUser):
    abstract = True
    key_strategy = "set:3"


def settings(azurite, **given) -> Settings:
    return Settings.from_options(namespace(connection_string=azurite.connection_string, seed_entities=30, **given))


def test_prepare_creates_and_seeds_the_table_for_every_user_class_and_abandon_drops_it(azurite, target):
    chosen = settings(azurite)
    reached, table = prepare(chosen, namespace(), [Orders, TableUser])
    try:
        assert table.name in tables(target) and table.created
        # the run's single key, and Orders' three: once per distinct seeding
        assert table.count("hot") == 30 and table.count() == 60
        assert reached.endpoint == target.endpoint
    finally:
        said = abandon(reached, table, keep_table=False)
    assert f"test table {table.name} dropped" in said and table.name not in tables(target)


def test_a_new_partition_key_from_the_start_form_is_seeded_before_the_next_test(azurite, target):
    chosen = settings(azurite)
    reached, table = prepare(chosen, namespace())
    try:
        same = next_settings(chosen, namespace(connection_string="", seed_entities=30), table)
        assert same.connection_string == chosen.connection_string and table.count() == 30  # nothing new to seed
        other = next_settings(chosen, namespace(seed_entities=30, partition_key="cold"), table)
        assert other.partition_key == "cold" and table.count("cold") == 30
    finally:
        abandon(reached, table, keep_table=False)


def test_an_unreachable_target_fails_in_one_error_and_leaves_nothing(azurite):
    dead = azurite.connection_string.replace(f":{azurite.port}/", ":9/")  # the discard port: nothing listens
    with pytest.raises(RunError, match="cannot reach http://127.0.0.1:9/"):
        prepare(Settings.from_options(namespace(connection_string=dead, timeout="2")), namespace())


def emulators_of(azurite) -> list[int]:
    """PIDs of throttling emulators in front of this Azurite."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"emulator" in command and f"http://127.0.0.1:{azurite.port}".encode() in command:
            found.append(int(pid))
    return found


def test_a_table_that_exists_is_not_written_without_reuse_and_the_emulator_started_is_stopped(azurite, table):
    chosen = settings(azurite, table=table.name, emulate_throttling=True)
    assert emulators_of(azurite) == []
    with pytest.raises(RunError, match="pass --reuse-table"):
        prepare(chosen, namespace())  # the emulator was started before the table was refused
    assert table.name in tables(table.target) and table.count() == 0
    assert emulators_of(azurite) == []
