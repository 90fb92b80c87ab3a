"""The served pace giving way: an emulator saturated as users grew (synthetic events), and against a real Azurite
its queries slowing as the table grows (EMULATOR_SLOWED)."""

from __future__ import annotations

import json

import pytest
from helpers import run_info, run_loadtest, series_of
from synthetic import recorded

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.bounds import served_pace
from loadtest.bounds.cpu import generator_bound
from loadtest.bounds.served_pace import emulator_slowed, saturation
from loadtest.findings.assess import assess
from loadtest.results.form import Results
from loadtest.results.summary import build


def pace(out):
    """Each second's scans: entities served and median latency (what EMULATOR_SLOWED reads)."""
    return [(row["t"], row["entities"], row["p50_ms"]) for row in series_of(out) if row["op_class"] == "GET"]


def thirds(out):
    """What EMULATOR_SLOWED read, its thresholds set aside (why it named a slowdown or not): each op class's served
    entities/s, median latency and rows in the steady phase's first and last thirds; and a generator out of CPU."""
    results = Results.load_file(out / "results.json")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("SLOWED_SHARE", float("inf")), ("LATENCY_ROSE", 0.0), ("ROWS_GREW", 0.0)):
            patch.setattr(served_pace, name, value)
        read = [(s.op_class, s.rate, s.latency_ms, s.rows) for s in emulator_slowed(results)]
    return read, generator_bound(results)


def kinds(results):
    return [f.kind for f in results.findings]


def saturating(users_by_second, requests_by_second, latency_by_second):
    seconds = {t: [{"ms": latency_by_second[t]}] * requests_by_second[t] for t in range(len(users_by_second))}
    metrics = recorded(seconds, steady_from=5)
    return build(
        metrics,
        run_info(emulator=True),
        samples={1_000_000 + t: {"users": u, "cpu": 50.0} for t, u in enumerate(users_by_second)},
    )


def test_saturation_is_seen_when_users_grow_but_served_load_does_not():
    users = [2, 4, 6, 8, 10] + [10] * 10
    full = saturating(users, [100, 130, 140, 140, 140] + [140] * 10, [20, 30, 43, 57, 71] + [71] * 10)
    assert "requests/s only" in saturation(full)
    assert "EMULATOR_BOUND" in kinds(assess(full))


def test_no_saturation_when_served_load_grows_with_users():
    users = [2, 4, 6, 8, 10] + [10] * 10
    scaling = saturating(users, [100, 200, 300, 400, 500] + [500] * 10, [20] * 15)
    assert saturation(scaling) is None
    assert "EMULATOR_BOUND" not in kinds(assess(scaling))


def test_seconds_after_a_worker_loss_are_no_evidence_of_saturation():
    """Served load grew with users; then a worker was lost at 10 s and its users vanished (5 left, as in a ramp)."""
    users = [2, 4, 6, 8, 10] + [10] * 5 + [5] * 5
    requests = [100, 200, 300, 400, 500] + [500] * 5 + [500] * 5
    latency = [20] * 10 + [10] * 5
    seconds = {t: [{"ms": latency[t]}] * requests[t] for t in range(len(users))}
    samples = {1_000_000 + t: {"users": u, "cpu": 50.0} for t, u in enumerate(users)}
    as_ramp = build(recorded(seconds, steady_from=5), run_info(emulator=True), samples=samples)
    assert saturation(as_ramp) is not None  # read without the loss, the last seconds look like a ramp
    lost = {"worker": "w1", "index": 1, "lost_at_s": 11.0, "last_report_s": 10.0}
    workers = {"reported": ["w0", "w1"], "lost": [lost]}
    after_loss = build(recorded(seconds, steady_from=5), run_info(emulator=True), samples=samples, workers=workers)
    assert saturation(after_loss) is None
    assert "EMULATOR_BOUND" not in kinds(assess(after_loss)) and "WORKER_LOST" in kinds(assess(after_loss))


@pytest.mark.parametrize(
    "batch_mix, seconds, grows",
    [
        pytest.param("insert=100", 30, True, id="table-grows", marks=pytest.mark.alone),  # a slowdown's size: the pace
        pytest.param("upsert=100", 6, False, id="table-kept"),  # a table that never grows can raise none
    ],
)
def test_azurite_slowing_as_its_table_grows_is_named_and_a_kept_table_raises_none(batch_mix, seconds, grows, tmp_path):
    """1,000 seeded rows, row range scans and batches: batches of new rows grow the table and slow Azurite's scans
    (it filters every row for a query); batches that upsert the seeded rows keep its size and its pace."""
    out = tmp_path / "out"
    with EmbeddedAzurite() as azurite:  # a fresh one: Azurite slows with what it holds
        done = run_loadtest(
            "run", "-t", f"{seconds}s", "-u", "6", "-r", "6", "--seed-entities", "1000", "--mix", "scan=50,batch=50",
            "--batch-mix", batch_mix, "--skip-verify", "--out", str(out), "--no-report",
            "--connection-string", azurite.connection_string,
        )  # fmt: skip
    assert done.code == 0, done.output
    results = json.loads((out / "results.json").read_text())
    gained = sum(row["rows"] for row in series_of(out))
    slowed = [f for f in results["findings"] if f["kind"] == "EMULATOR_SLOWED"]
    if grows:
        # the table grew tenfold (the finding asks 1.3x between thirds). 30 s from 1,000 rows, not 20 from 5,000: 20 s
        # landed near the finding's edges (0.7, 1.5) on this 2-core machine, scans x0.48-0.67 and latency x1.53-2.0 in six
        # runs, and failed on CI; 30 s from 1,000 rows gave x0.42-0.52, latency x2.1-2.6, in three (88,000-100,000 rows)
        assert gained >= 10_000, gained
        # the scans (its batches may slow too); when they do not, the figures the finding read say why, the findings'
        # kinds first (a message pytest cuts short still shows them)
        scans = {f["op_class"]: f["message"] for f in slowed}.get("GET")
        named = [f["kind"] for f in results["findings"]]
        assert scans, (named, thirds(out), [(s["t"], s["cpu"], s.get("servers_cpu")) for s in results["load"]], pace(out))
        assert "the table grew from" in scans and "Azurite's queries slow as it grows" in scans, scans
        assert "still the design's" in scans
    else:
        assert gained == 0 and slowed == [], slowed
