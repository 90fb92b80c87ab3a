import re

from synthetic import environment

from loadtest.testbed.integrity import Ledger, user_row_prefix, verify


def fire(env, written, *, error=None, **context):
    context = {"partition": "p", "op_class": "PUT", "entities": 1, "written": written, **context}
    env.events.request.fire(
        request_type="x",
        name="x",
        response_time=1.0,
        response_length=1,
        exception=RuntimeError(error) if error else None,
        context=context,
    )


def test_the_ledger_keeps_acknowledged_writes_only():
    env = environment()
    ledger = Ledger.register(env)
    fire(env, (("insert", "p", "u1"),))
    fire(env, (("insert", "p", "u2"),), error="ServerBusy")  # not acknowledged
    fire(env, (("upsert", "p", "u3"), ("delete", "p", "u1")))
    fire(env, (("insert", "p", "u4"),), succeeded_earlier=1)
    assert ledger.created == {("p", "u3"), ("p", "u4")} and ledger.deleted == {("p", "u1")}
    assert ledger.succeeded_earlier == 1


def test_verify_finds_lost_resurrected_and_unacknowledged_writes():
    ledger = Ledger(created={("p", "u1"), ("p", "u2")}, deleted={("p", "u3")})
    table = {("p", "u1"), ("p", "u3"), ("p", "u9"), ("p", "0000000001")}
    report = verify(ledger, table)
    assert report["lost"] == 2  # u2 missing, u3 deleted but present
    assert report["unacknowledged"] == 1  # u9: a user's row nobody acknowledged; seeded rows do not count
    assert report["acknowledged_writes"] == 3


def test_worker_ledgers_merge():
    master = Ledger(created={("p", "a")})
    master.merge(Ledger(created={("p", "b")}, deleted={("p", "a")}, succeeded_earlier=2).to_dict())
    assert master.created == {("p", "b")} and master.deleted == {("p", "a")} and master.succeeded_earlier == 2


def test_a_disabled_ledger_keeps_nothing():
    env = environment()
    ledger = Ledger.register(env)
    ledger.enabled = False  # --skip-verify: no read-back, so no memory spent on it
    fire(env, (("insert", "p", "u1"),))
    assert ledger.created == set()


def test_rows_of_a_worker_lost_before_its_ledger_arrived_are_its_own():
    prefix = user_row_prefix(1)
    assert re.fullmatch(r"u1\.[0-9a-f]{6}-", prefix) and user_row_prefix(1) != prefix
    table = {("p", f"{prefix}0000000001"), ("p", f"{prefix}0000000002"), ("p", "u0.abcdef-0000000001"), ("p", "0000000001")}
    report = verify(Ledger(), table, lost_workers=[1])
    assert report["by_lost_workers"] == 2 and report["unacknowledged"] == 1 and report["lost"] == 0
    assert verify(Ledger(), table)["unacknowledged"] == 3
