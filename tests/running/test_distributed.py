"""Locust master + workers against a real Azurite: seeded once, merged exactly, lost workers named."""

from __future__ import annotations

import argparse
import json
import logging
from types import SimpleNamespace

import pytest
from helpers import WORKLOAD, in_process, results_of

from loadtest import lifecycle
from loadtest.account.connection_string import CONNECTION_STRING_ENV
from loadtest.exit_codes import UsageError
from loadtest.options.settings import Settings, namespace
from loadtest.redact import public_url
from loadtest.testbed.table import TestTable
from loadtest.workload.key_specs import key_strategy


@pytest.mark.parametrize("client", ["sdk"])  # the fast client through a master and workers: test_engines, against 3 engines
def test_master_and_two_workers_merge_exactly_what_was_written(loadtest, azurite, target, tmp_path, client):
    stats_file = tmp_path / "locust-stats.json"  # Locust's --json-file adds the .json itself
    done = loadtest(
        "run",
        "--client",
        client,
        "--workers",
        "2",
        "-t",
        "6s",
        "-u",
        "4",
        "-r",
        "4",
        *WORKLOAD,
        "--keep-table",
        "--out",
        str(tmp_path / "out"),
        "--no-report",
        "--connection-string",
        azurite.connection_string,
        "--json-file",
        str(stats_file.with_suffix("")),
    )
    assert done.code == 0, done.output
    results = results_of(tmp_path / "out")
    assert len(results["workers"]["reported"]) == 2 and results["workers"]["lost"] == []
    assert done.output.count("Seeding 200 entities") == 1  # on the master only
    assert done.output.count("Worker joined the run") == 2
    (put,) = [row for row in results["partitions"] if row["op_class"] == "PUT"]
    table = TestTable(target=target, name=results["run"]["table"], created=True)
    try:
        assert table.count("hot") - 200 == put["entities"] > 0
    finally:
        table.drop()
    # every bucket once: the per-second rows add up to the totals, and to Locust's own request count
    assert sum(row["entities"] for row in results["timeseries"]) == put["entities"]
    assert sum(row["requests"] for row in results["timeseries"]) == put["requests"]
    locust_requests = sum(entry["num_requests"] for entry in json.loads(stats_file.read_text()))
    assert put["requests"] == locust_requests
    # each worker's own CPU, every second, beside the master's
    workers_cpu = [s["workers_cpu"] for s in results["load"] if "workers_cpu" in s]
    assert len(workers_cpu) >= 4 and all(set(cpu) == set(results["workers"]["reported"]) for cpu in workers_cpu[1:-1])
    assert all(0 < pct < 150 for cpu in workers_cpu[1:-1] for pct in cpu.values())


def test_each_users_stream_draws_its_own_keys_and_guids_never_repeat_across_streams():
    """What a user's stream is made of: its worker's index, then its number (``TableUser``); two streams of one seed
    draw different sequences, and GUID keys never meet."""
    streams = [key_strategy(spec, seed=1, stream=stream) for spec in ("guid", "hash-prefix:16") for stream in ("0.0", "1.0")]
    guid_a, guid_b, hashed_a, hashed_b = ([s.new_partition() for _ in range(20)] for s in streams)
    assert not set(guid_a) & set(guid_b) and hashed_a != hashed_b
    again = key_strategy("hash-prefix:16", seed=1, stream="0.0")
    assert [again.new_partition() for _ in range(20)] == hashed_a  # repeatable


@pytest.mark.parametrize("strategy", ["hash-prefix:16"])
def test_users_on_different_workers_draw_different_key_sequences(loadtest, azurite, target, tmp_path, strategy):
    """One user on each of two workers: each draws its own PartitionKeys (they once shared one stream). Through real
    workers for one strategy; the streams themselves, for every strategy's kind, in the test above."""
    done = loadtest(
        "run",
        "--workers",
        "2",
        "-t",
        "3s",
        "-u",
        "2",
        "-r",
        "2",
        "--key-strategy",
        strategy,
        "--mix",
        "insert=1",
        "--seed-entities",
        "16",
        "--keep-table",
        "--skip-verify",
        "--out",
        str(tmp_path),
        "--no-report",
        "--connection-string",
        azurite.connection_string,
    )
    assert done.code == 0, done.output
    assert done.output.count("Worker joined the run") == 2
    table = TestTable(target=target, name=json.loads((tmp_path / "results.json").read_text())["run"]["table"], created=True)
    try:
        rows = table.keys()
    finally:
        table.drop()
    sequences: dict[str, list[tuple[int, str]]] = {}
    for pk, rk in rows:
        if rk.startswith("u"):  # a user's insert: u<user>-<n>; seeded rows are not
            user, _, n = rk.partition("-")
            sequences.setdefault(user, []).append((int(n), pk))
    assert len(sequences) == 2, sequences.keys()
    first, second = ([pk for _, pk in sorted(seq)] for seq in sequences.values())
    length = min(len(first), len(second))
    assert length >= 5, (len(first), len(second))
    assert first[:length] != second[:length]
    if strategy == "guid":
        assert not set(first) & set(second)


SAS_URL = "https://acct.table.core.windows.net/?sv=2022-11-02&ss=t&srt=sco&sp=rwdlacu&sig=pl4nt3dS1g%3D"


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one process", "workers"])
def test_a_sas_in_the_account_url_is_refused_before_anything_starts_naming_what_works(monkeypatch, tmp_path, workers):
    """A SAS in ``--account-url`` was never a credential: every process signs in there with Azure AD, and workers were
    handed the URL redacted (``sig=***``). Refused in one line, exit 2, nothing written, no secret shown; the line says
    what works (the URL alone, or the SAS in a connection string that each worker reads from its own environment)."""
    out = tmp_path / "out"
    code, stdout, stderr = in_process(monkeypatch, "run", *workers, "--account-url", SAS_URL, "--out", str(out))
    assert code == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith("loadtest: error: --account-url 'https://acct.table.core.windows.net/") and "pl4nt3d" not in stderr
    assert "SharedAccessSignature=" in stderr and CONNECTION_STRING_ENV in stderr and "each worker" in stderr
    assert not out.exists()
    with pytest.raises(UsageError, match="--account-url"):  # locust -f's and the web form's entry alike
        Settings.from_options(namespace(account_url=SAS_URL))
    assert Settings.from_options(namespace(account_url=public_url(SAS_URL))).account_url  # the URL alone: Azure AD


def test_a_worker_that_cannot_join_the_masters_run_says_why_in_one_line(caplog):
    """A worker with a connection string of its own, its master signed in to an --account-url: two targets. The
    worker said so in a traceback from Locust's message loop; it says it in one line and does not join."""
    master = Settings.from_options(namespace(account_url="https://acct.table.core.windows.net"))
    options = {k: v for k, v in master.public().items() if k not in ("connection_string", "upload")}  # as sent
    worker = SimpleNamespace(parsed_options=argparse.Namespace(connection_string="UseDevelopmentStorage=true"))
    data = {"run_id": "r1", "table": "t", "seeded": 0, "users": 1, "options": options, "embedded": ""}
    with caplog.at_level(logging.ERROR, logger="loadtest"):
        lifecycle._join_run(worker, None, data)  # noqa: SLF001
    assert [r.getMessage() for r in caplog.records] == [
        "this worker cannot join the run: --connection-string and --account-url name two targets: give one"
    ]
