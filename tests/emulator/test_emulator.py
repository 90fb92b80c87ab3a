"""The throttling emulator in front of a real Azurite: Azure's answers over budget, and retries that cope."""

from __future__ import annotations

import json
import re
import socket
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import gevent
import numpy as np
import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableClient
from gevent.server import StreamServer
from helpers import Hooks, results_of
from synthetic import environment

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.account.endpoint import Target, resolve_target
from loadtest.emulator.budgets import Budget, Budgets
from loadtest.emulator.relay import Relay
from loadtest.emulator.throttle import Throttle, charge_of
from loadtest.redact import AZURITE_ACCOUNT
from loadtest.service.entities import EntityShape
from loadtest.service.error_codes import CONNECTION_ERROR, PARTITION_BUSY, ServiceError, service_message, throttle_reason
from loadtest.service.operations import OPERATIONS
from loadtest.service.retry import parse_retry
from loadtest.session.table_session import TableSession
from loadtest.testbed.table import TestTable
from loadtest.transports.rest import RestTransport
from loadtest.workload.key_specs import key_strategy

#: Budgets that never refill within a test (a millionth of an entity a second at most) and hold 100 entities per
#: partition and 10,000 for the account: what a bucket lost is what the emulator charged.
LEDGER = {"partition_rate": 1e-8, "account_rate": 1e-6, "burst": 1e10}


def test_requests_are_charged_as_the_docs_count_entities():
    assert charge_of("GET", "/devstoreaccount1/t(PartitionKey='hot',RowKey='1')", "", b"") == ("hot", 1)
    assert charge_of("DELETE", "/devstoreaccount1/t(PartitionKey='o''k',RowKey='1')", "", b"") == ("o'k", 1)
    assert charge_of("POST", "/devstoreaccount1/t", "", b'{"PartitionKey":"p1","RowKey":"r"}') == ("p1", 1)
    query = "$filter=PartitionKey%20eq%20%27hot%27%20and%20RowKey%20ge%20%270%27"
    assert charge_of("GET", "/devstoreaccount1/t()", query, b"") == ("hot", 0)  # charged on its answer
    part = b'--changeset\r\nPOST http://h/devstoreaccount1/t HTTP/1.1\r\n\r\n{"PartitionKey":"b","RowKey":"%d"}\r\n'
    batch = b"".join(part % i for i in range(37))
    assert charge_of("POST", "/devstoreaccount1/$batch", "", batch) == ("b", 37)
    assert charge_of("POST", "/devstoreaccount1/Tables", "", b'{"TableName":"x"}') == (None, 0)


def test_a_query_starts_where_its_keys_or_continuation_say_and_a_page_limit_cuts_its_top():
    """Admitted on its PartitionKey, its continuation's (Azurite's tokens are base64), its inclusive lower bound, or
    (none of them) on its answer; listed from upstream only when something other than keys filters it."""
    from urllib.parse import quote

    from loadtest.emulator.queries import is_query, query_of

    def where(text: str) -> str:
        return "$filter=" + quote(text, safe="")

    assert is_query("/devstoreaccount1/t()") and not is_query("/devstoreaccount1/t(PartitionKey='a',RowKey='b')")
    assert not is_query("/devstoreaccount1/Tables") and not is_query("/devstoreaccount1/")
    seek = query_of("$top=100&" + where("PartitionKey eq 'a' and RowKey lt '5'"))
    assert (seek.start, seek.partition, seek.listing, seek.forward) == ("a", "a", None, None)
    assert query_of(where("PartitionKey ge 'k1' and PartitionKey lt '~'")).start == "k1"
    assert query_of(where("PartitionKey gt 'k1'")).start is None and query_of("$top=5").start is None
    resume = "NextPartitionKey=Yg%3D%3D&NextRowKey=MDAwNA%3D%3D"
    resumed = query_of("$top=7&" + where("PartitionKey ge 'a'") + "&" + resume)
    assert resumed.start == "b" and resumed.resume == resume
    filtered = query_of("sv=1&sig=s&$top=100&" + where("PartitionKey eq 'a' and n lt 5") + "&$select=n", page_rows=7)
    assert filtered.listing == "sv=1&sig=s&" + where("PartitionKey eq 'a'") + "&$select=PartitionKey,RowKey&$top=1000"
    assert filtered.forward == "sv=1&sig=s&" + where("PartitionKey eq 'a' and n lt 5") + "&$select=n&$top=7"
    assert query_of("$top=5", page_rows=7).forward is None and query_of("", page_rows=7).forward == "$top=7"


def test_a_token_bucket_holds_one_second_and_refills_at_its_rate():
    budget = Budget(100)
    now = budget.updated
    budget.take(150)
    assert not budget.has(now) and not budget.has(now + 0.4)
    assert budget.has(now + 0.6) and budget.tokens == pytest.approx(10, abs=1)
    assert budget.has(now + 10) and budget.tokens == 100


def test_each_budget_refuses_in_azures_words_and_a_client_tells_the_reason_from_them():
    """The account's budget answers "Operations per second is over the account limit.", a partition's the service's
    general ServerBusy message, a share of either 500 OperationTimedOut: the reasons a client reads back."""
    path = "/devstoreaccount1/t(PartitionKey='hot',RowKey='1')"
    reasons = []
    for budgets in (Budgets(partition_rate=10_000, account_rate=1), Budgets(partition_rate=1, account_rate=10_000)):
        throttle = Throttle(budgets, seed=1)
        answers = [throttle.refusal("GET", path, "", b"")[0] for _ in range(50)]
        head, _, body = next(a for a in answers if a).partition(b"\r\n\r\n")
        assert b"503 Service Unavailable" in head and b"x-ms-error-code: ServerBusy" in head
        reasons.append(throttle_reason(503, "ServerBusy", service_message(body)))
    assert reasons == ["account", "partition"]
    assert (
        service_message(json.dumps({"odata.error": {"code": "ServerBusy", "message": {"value": PARTITION_BUSY}}}))
        == PARTITION_BUSY
    )
    assert throttle_reason(500, "OperationTimedOut") == "timeout" and throttle_reason(504, None) == "timeout"
    assert throttle_reason(503, "ServerBusy", "Egress is over the account limit.") == "account"


@pytest.fixture
def throttled(azurite):
    """A 20 entities/s per-partition budget in front of the session's Azurite."""
    direct = resolve_target(connection_string=azurite.connection_string)
    target = direct.behind_emulator(Budgets(partition_rate=20, account_rate=10_000))
    table = TestTable.open(target)
    yield target, table
    table.drop()
    pid = target.emulator.pid
    target.emulator.stop()
    with pytest.raises(ProcessLookupError):
        __import__("os").kill(pid, 0)


def test_the_sdk_with_its_own_retry_policy_raises_what_azure_raises(throttled):
    target, table = throttled
    client = TableClient.from_connection_string(
        target.connection_string, table_name=table.name, retry_total=2, retry_backoff_factor=0.01
    )  # the SDK's policy, short waits
    client.upsert_entity({"PartitionKey": "hot", "RowKey": "1"})
    attempts = []
    with pytest.raises(HttpResponseError) as caught:
        for _ in range(200):
            client.get_entity("hot", "1", raw_response_hook=lambda r: attempts.append(r.http_response.status_code))
    err = caught.value
    assert err.status_code == 503 and getattr(err.error_code, "value", err.error_code) == "ServerBusy"
    assert attempts[-3:] == [503, 503, 503]  # retried as retryable, then raised
    time.sleep(1.2)
    assert client.get_entity("hot", "1")["RowKey"] == "1"  # the budget refills


@pytest.mark.alone
@pytest.mark.parametrize(
    "retry,failures_expected,client",
    [("none", True, "fast"), ("exponential:8,0.2,0.05,2", False, "fast")],
)  # the sdk client reads the same answers alike: test_conformance's throttled answers, by code, reason and retry
def test_throttling_shows_per_second_per_partition_and_backoff_lets_operations_complete(
    loadtest, azurite, tmp_path, retry, failures_expected, client
):
    done = loadtest(
        "run",
        "--client",
        client,
        "-t",
        "5s",
        "-u",
        "4",
        "-r",
        "4",
        "--seed-entities",
        "100",
        "--mix",
        "read=70,upsert=20,insert=10",
        "--emulate-throttling",
        "--key-strategy",
        "set:2",
        "--skew",
        "hotspot:80,50",  # 80 % of operations on the first key: over its 50/s, while the account's 70/s refuses too
        "--emulator-partition-rate",
        "50",
        "--emulator-account-rate",
        "70",
        "--retry",
        retry,
        "--out",
        str(tmp_path),
        "--connection-string",
        azurite.connection_string,
    )
    assert done.code == 0, done.output
    data = results_of(tmp_path)
    throttled_seconds = {row["t"] for row in data["timeseries"] if row["partition"] == "k0000000" and row["throttled"]}
    assert len(throttled_seconds) >= 3
    # each throttled attempt by its reason, as the emulator words Azure's answers and each client reads them
    reasons = Counter()
    for row in data["partitions"]:
        if row["op_class"] != "ALL":
            reasons.update(row["throttled_by"])
            assert sum(row["throttled_by"].values()) == row["throttled"], row
    assert reasons["partition"] > 0 and set(reasons) <= {"partition", "account"}, reasons
    throttled = [f["message"] for f in data["findings"] if f["kind"] == "THROTTLED"]
    assert any("for the partition over the throttling emulator's" in m for m in throttled)
    if failures_expected:  # unretried, the demand stays over the account's limit too (backing off, it falls under it)
        assert reasons["account"] > 0 and any("for the account over the throttling emulator's" in m for m in throttled), reasons
    failures = sum(r["failures"] for r in data["partitions"] if r["op_class"] != "ALL")
    if failures_expected:
        assert failures > 0 and data["errors"].get("ServerBusy") == failures
        assert data["retry"]["attempts_per_operation"] == 1.0
    else:
        assert failures == 0 and data["errors"] == {}
        assert data["retry"]["attempts_per_operation"] > 1.0 and data["retry"]["backoff_s"] > 0
    # read back: every acknowledged write is in the table, whatever the retry strategy
    assert data["integrity"]["checked"] and data["integrity"]["acknowledged_writes"] > 0
    assert data["integrity"]["lost"] == 0 and data["integrity"]["unacknowledged"] == 0
    report = (tmp_path / "report.html").read_text()
    assert "THROTTLED" in report and "retry-figures" in report and "for the partition over the throttling" in report
    assert "for the account over the throttling" in report or not failures_expected


def test_load_balancing_splits_spread_keys_but_never_one_key():
    """The partition layer alone, on a synthetic clock: 120 entities/s offered, servers of 40/s."""
    from loadtest.emulator.budgets import PartitionLayer

    def offer(layer, keys, seconds, start=0.0):
        refused_per_second = []
        for second in range(seconds):
            refused = 0
            for i in range(120):  # 120 point operations a second, round robin over the keys
                now = start + second + i / 120
                refused += not layer.admit(keys[i % len(keys)], 1, now)
            refused_per_second.append(refused)
        return refused_per_second

    start = time.monotonic()  # budgets start full at creation time
    hot = PartitionLayer(server_rate=40, lb_delay=1.0, lb_offline=0.3)
    refused = offer(hot, ["hot"], 12, start)
    assert len(hot.ranges) == 1 and hot.splits == []  # one PartitionKey is never split
    assert min(refused[-4:]) >= 70  # and it stays throttled: 120 offered, 40 served

    start = time.monotonic()
    spread = PartitionLayer(server_rate=40, lb_delay=1.0, lb_offline=0.3)
    refused = offer(spread, [f"{i:03d}" for i in range(16)], 12, start)
    assert len(spread.ranges) >= 4  # 120/s over 40/s servers: split until each range fits
    assert refused[-4:] == [0, 0, 0, 0]  # recovered
    assert refused[1] > 0  # throttled before the first split


def test_the_range_where_new_keys_land_is_one_budget_by_request_and_by_tick_alike():
    """150 writes a second, each second to that second's key (the docs' append-only anti-pattern), 100 entities/s a
    partition: every new key past the largest is in the newest range, so one budget refuses a third of them, per request
    (the emulator) and per tick (the simulator's face) alike; a fixed key set's largest key is its range alone."""
    from loadtest.emulator.budgets import KeyEnds

    def by_request(keys_of, seconds, start):
        ends, refused = KeyEnds(100, 1.0, now=start), 0
        for second in range(seconds):
            for i in range(150):
                now, key = start + second + i / 150, keys_of(second, i)
                if ends.admit(key, now):
                    ends.charge(key, 1, now)
                else:
                    refused += 1
        return refused

    start = time.monotonic()
    stamped = lambda second, i: f"2026{second:06d}"  # noqa: E731
    assert by_request(stamped, 40, start) == pytest.approx(40 * 50, rel=0.05)
    fixed = lambda second, i: f"k{i % 3}"  # noqa: E731  # 50 a second each: under the budget, the largest one alone
    assert by_request(fixed, 40, start) == 0

    ends, served, asked = KeyEnds(100, 1.0, now=0.0), 0.0, 0.0
    for tick in range(400):  # ticks of 0.1 s over 40 keys in key order, each second's key taking its 15 a tick
        wanted = np.zeros(40)
        wanted[tick // 10] = 15.0
        served += float((wanted * ends.admit_tick(wanted, (tick + 1) / 10)).sum())
        asked += 15.0
    assert served / 40 == pytest.approx(100, rel=0.05) and asked / 40 == 150


@pytest.mark.parametrize(("per_key_only", "refused"), [(False, 199), (True, 0)])
def test_the_emulator_budgets_the_newest_range_unless_told_per_key_only(per_key_only, refused, monkeypatch):
    """300 inserts at once under ever-higher keys: one range's 100 entities unless each new key has its own budget (the
    first insert lands on no edge, as nothing was written before it: 199 of the other 299 are over the range's). At
    one instant of the layer's clock (a busy machine's slower calls would refill the buckets between them), seconds after
    any bucket was made: each starts full."""
    now = time.monotonic() + 60
    monkeypatch.setattr("loadtest.emulator.throttle.time", SimpleNamespace(monotonic=lambda: now, time=time.time))
    throttle = Throttle(Budgets(partition_rate=100, account_rate=10_000, per_key_only=per_key_only), seed=1)
    bodies = [json.dumps({"PartitionKey": f"2026{n:06d}", "RowKey": "r"}).encode() for n in range(300)]
    answers = [throttle.refusal("POST", "/devstoreaccount1/t", "", body)[0] for body in bodies]
    assert sum(a is not None for a in answers) == refused


def test_a_share_of_throttled_answers_can_be_500_operation_timed_out(azurite):
    target = resolve_target(connection_string=azurite.connection_string).behind_emulator(
        Budgets(partition_rate=5, account_rate=10_000, timeout_share=1.0)
    )
    try:
        table = TestTable.open(target)
        client = TableClient.from_connection_string(target.connection_string, table_name=table.name, retry_total=0)
        with pytest.raises(HttpResponseError) as caught:
            for i in range(50):
                client.upsert_entity({"PartitionKey": "hot", "RowKey": str(i)})
        assert caught.value.status_code == 500
        assert getattr(caught.value.error_code, "value", caught.value.error_code) == "OperationTimedOut"
        table.drop()
    finally:
        target.close()


def test_the_relay_passes_every_kind_of_answer_and_a_dead_upstream_is_a_connection_error(tmp_path):
    """Through the emulator (budgets far above the load): point and paged queries (chunked or not; pages of at most
    40 rows, as ``--page-rows`` cuts them), batches, errors; Azurite restarted under a kept-alive connection (the relay
    reconnects); then Azurite killed: the client sees what it would see without the emulator."""
    with EmbeddedAzurite() as azurite:
        target = resolve_target(connection_string=azurite.connection_string).behind_emulator(
            Budgets(partition_rate=10**9, account_rate=10**9, page_rows=40)
        )
        try:
            table = TestTable.open(target)
            hooks = Hooks()
            client = RestTransport(target=target, table=table.name, retry=parse_retry("none"), seed=None, hooks=hooks)
            rows = [{"PartitionKey": "p", "RowKey": f"{i:04d}", "v": "x" * 500} for i in range(250)]
            for start in range(0, 250, 100):
                client.batch([(OPERATIONS["insert"], row) for row in rows[start : start + 100]])
            pages = len(hooks.answers)
            assert sum(1 for _ in client.query("PartitionKey eq @p", {"p": "p"}, select=None, page_size=60)) == 250
            assert len(hooks.answers) - pages == 7  # 250 rows in pages of 40
            assert client.get("p", "0007")["v"] == "x" * 500
            with pytest.raises(ServiceError) as missing:
                client.get("p", "nope")
            assert missing.value.code == "ResourceNotFound"
            # one kept-alive connection to the relay, by hand (clients reconnect by themselves and would hide it)
            relay = socket.create_connection(("127.0.0.1", target.emulator.port))
            request = f"GET /{AZURITE_ACCOUNT}/Tables HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            relay.sendall(request)
            assert relay.recv(65536).startswith(b"HTTP/1.1 403")  # unsigned: refused, but answered
            azurite.stop()
            azurite.start()  # restarted on its port: the relay's upstream connection is dead, a new one answers
            relay.sendall(request)
            assert relay.recv(65536).startswith(b"HTTP/1.1 403")
            relay.close()
            azurite.stop()
            with pytest.raises(ServiceError) as dead:
                client.get("p", "0007")
            assert dead.value.code == CONNECTION_ERROR
        finally:
            target.close()


@contextmanager
def relayed(azurite, budgets: Budgets) -> Iterator[tuple[Target, Throttle]]:
    """The emulator's own relay in this process, in front of the session's Azurite: a target through it, and its
    budgets to read."""
    throttle = Throttle(budgets)
    server = StreamServer(("127.0.0.1", 0), Relay(f"http://127.0.0.1:{azurite.port}", throttle).handle)
    server.start()
    endpoint = f"http://127.0.0.1:{server.server_port}/{AZURITE_ACCOUNT}"
    direct = resolve_target(connection_string=azurite.connection_string)
    try:
        yield (
            resolve_target(
                connection_string=re.sub(r"TableEndpoint=[^;]*", f"TableEndpoint={endpoint}", direct.connection_string)
            ),
            throttle,
        )
    finally:
        server.stop()


def charged(throttle: Throttle) -> dict[str, float]:
    """Entities charged so far to each partition's budget (``LEDGER``'s never refill), and to the account's."""
    start = LEDGER["partition_rate"] * LEDGER["burst"]
    spent = {pk: round(start - b.tokens, 3) for pk, b in throttle.partitions.items() if pk is not None}
    spent = {pk: n for pk, n in spent.items() if n}
    return {**spent, "(account)": round(LEDGER["account_rate"] * LEDGER["burst"] - throttle.account.tokens, 3)}


def counted(event: dict) -> dict[str, float]:
    """What the report counts of one operation: its entities where they were, and in all (the account's)."""
    context = event["context"]
    spread = context.get("partitions") or {context["partition"]: context["entities"]}
    return {**{pk: float(n) for pk, n in spread.items() if n}, "(account)": float(context["entities"])}


def charged_for(throttle: Throttle, before: dict[str, float], report: dict[str, float]) -> dict[str, float]:
    """What the emulator charged since ``before``, once it equals what the report counts or 3 s have passed (a
    filtered query is charged after its answer has gone to the client: its key range is listed then)."""
    deadline = time.monotonic() + 3
    while True:
        after = charged(throttle)
        delta = {pk: round(n - before.get(pk, 0.0), 3) for pk, n in after.items() if n != before.get(pk, 0.0)}
        if delta == report or time.monotonic() > deadline:
            return delta
        gevent.sleep(0.01)


def session(target: Target, table: TestTable, events: list, client: str = "fast", **known) -> TableSession:
    env = environment()
    env.events.request.add_listener(lambda **kw: events.append(kw))
    return TableSession(target=target, table=table.name, request_event=env.events.request, client=client, **known)


def charged_beside_counted(throttle, events: list, kinds: dict) -> dict:
    """Each operation run once: (what the emulator charged for it, what the report counted), per kind; the two equal."""
    seen = {}
    for kind, operation in kinds.items():
        before = charged(throttle)
        operation()
        assert events[-1]["exception"] is None, (kind, events[-1])
        seen[kind] = (charged_for(throttle, before, counted(events[-1])), counted(events[-1]))
    assert all(emulator == report for emulator, report in seen.values()), seen
    return seen


def test_every_query_kind_is_charged_the_rows_it_scans_where_they_were_as_the_report_counts_them(azurite, table):
    """A filter scan costs the rows in its key range, not its matches; partition range and table scans (and the
    application's queries across partitions) cost the rows they read in each partition, and the account all of them."""
    keys = key_strategy("set:4")
    k0, k1, k2, k3 = keys.keys()
    table.seed(keys, 160, EntityShape.for_size(256), progress=False)  # 40 rows a key, straight to Azurite: uncharged
    with relayed(azurite, Budgets(**LEDGER)) as (target, throttle):
        events: list = []
        ops = session(target, table, events, keys=keys, seeded=160)
        kinds = {
            "point read": lambda: ops.read(k1, keys.row(3)),
            "row range scan": lambda: ops.scan(k1, keys.row(0), keys.row(20)),
            "filter scan": lambda: ops.scan(k1, keys.row(0), keys.row(20), where="n lt 5", known_rows=20),
            "partition range scan": lambda: ops.scan_partitions(k2, "~", limit=60),
            "table scan": lambda: ops.scan_partitions("", "", limit=50),
            "query across partitions": lambda: ops.query(f"PartitionKey ge '{k2}' and n lt 5"),
            "query of the table": lambda: ops.query("n lt 50"),
        }
        seen = charged_beside_counted(throttle, events, kinds)
        assert seen["filter scan"][1] == {k1: 20.0, "(account)": 20.0} and events[2]["context"]["returned"] < 20
        assert seen["partition range scan"][1] == {k2: 40.0, k3: 20.0, "(account)": 60.0}
        assert seen["table scan"][1] == {k0: 40.0, k1: 10.0, "(account)": 50.0}


@pytest.mark.parametrize("client", ["fast", "sdk"])
def test_a_scan_through_pages_cut_short_reads_and_counts_every_row_up_to_its_size(azurite, table, client):
    """The emulator told to answer at most 7 rows a page, with a continuation token (as Azure cuts pages at
    partition-server boundaries): a scan of N rows reads pages until it has N rows or its range ends, each page asking
    only for what remains, and counts every row it read, which is what the emulator relayed and charged."""
    keys = key_strategy("set:4")
    k0, k1, k2, k3 = keys.keys()
    table.seed(keys, 160, EntityShape.for_size(256), progress=False)  # 40 rows a key
    with relayed(azurite, Budgets(**LEDGER, page_rows=7)) as (target, throttle):
        events: list = []
        ops = session(target, table, events, client=client, keys=keys, seeded=160)
        kinds = {
            "partition range scan of 25": lambda: ops.scan_partitions(k1, "~", limit=25),
            "table scan of 45, into a second partition": lambda: ops.scan_partitions("", "", limit=45),
            "row range scan of 30": lambda: ops.scan(k3, keys.row(0), keys.row(30), page_size=30),
            "query of the top 10": lambda: ops.query(f"PartitionKey eq '{k2}'", top=10),
            "filtered query of a partition": lambda: ops.query(f"PartitionKey eq '{k2}' and n lt 50"),
        }
        seen = charged_beside_counted(throttle, events, kinds)
        assert seen["partition range scan of 25"][1] == {k1: 25.0, "(account)": 25.0}
        assert seen["table scan of 45, into a second partition"][1] == {k0: 40.0, k1: 5.0, "(account)": 45.0}
        assert seen["row range scan of 30"][1] == {k3: 30.0, "(account)": 30.0}
        assert seen["query of the top 10"][1] == {k2: 10.0, "(account)": 10.0} and events[3]["context"]["returned"] == 10
        assert seen["filtered query of a partition"][1] == {k2: 40.0, "(account)": 40.0}  # three pages of 7 matches
