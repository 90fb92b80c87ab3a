"""Keys hot for a while, read from production's logs (issue #63): a table keyed by minute (every write goes to the
current minute's key, a dashboard tails it, it is throttled at the peak) beside six steady customer keys and more cold
keys than the counts keep apart, each of which takes more over the span than a minute key does. Each minute key is
named with its exact counts, THROTTLED names the throttled ones, and their level is their own minute's."""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import in_process

START = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
MINUTES = 10
WRITES, READS = 8, 4  # a second, to the current minute's key
THROTTLED_MINUTES = range(3, 7)  # a quarter of their writes answered 503 ThrottlingError
CUSTOMERS = [f"cust-{i:04d}" for i in range(1, 7)]
COLD = [f"zz-cold-{i:03d}" for i in range(55)]  # 55 keys at 1.3 a second: each more over the span than a minute key


def _row(when: datetime, operation: str, key: str, status: int, text: str, n: int) -> dict:
    url = f"https://acct.table.core.windows.net/events(PartitionKey='{key}',RowKey='r{n}')"
    return {
        "TimeGenerated": when.strftime("%Y-%m-%dT%H:%M:%S.%f0Z"), "OperationName": operation, "StatusCode": str(status),
        "StatusText": text, "Uri": url, "ObjectKey": f"/acct/events/{key}/r{n}", "DurationMs": 4, "ServerLatencyMs": 3,
        "RequestBodySize": 600, "ResponseBodySize": 700, "ClientRequestId": f"req-{n}", "MetricResponseType": "",
    }  # fmt: skip


def minute_logs(path: Path, seed: int = 5) -> tuple[Counter[tuple[str, str]], Counter[str]]:
    """JSON lines as Log Analytics exports them; returns what was written: requests per (key, op class), and throttled
    records per key."""
    rng, n = random.Random(seed), 0
    asked: Counter[tuple[str, str]] = Counter()
    throttled: Counter[str] = Counter()
    with path.open("w", encoding="utf-8") as out:
        for second in range(MINUTES * 60):
            now = START + timedelta(seconds=second)
            minute = (START + timedelta(seconds=second)).strftime("%Y%m%dT%H%M")
            load = [("InsertOrReplaceEntity", minute)] * WRITES + [("QueryEntity", minute)] * READS
            load += [("QueryEntity", rng.choice(CUSTOMERS)) for _ in range(5)]
            load += [("QueryEntity", key) for key in COLD if rng.random() < 1.3]  # every cold key each second ...
            load += [("QueryEntity", rng.choice(COLD)) for _ in range(17)]  # ... and 0.3 more of each
            for i, (operation, key) in enumerate(load):
                status, text = 200, "Success"
                if key == minute and operation != "QueryEntity" and second // 60 in THROTTLED_MINUTES and i % 4 == 0:
                    status, text = 503, "ThrottlingError"
                    throttled[key] += 1
                when = now + timedelta(seconds=i / len(load))
                out.write(json.dumps(_row(when, operation, key, status, text, n)) + "\n")
                asked[(key, "GET" if operation == "QueryEntity" else "PUT")] += 1
                n += 1
    return asked, throttled


@pytest.fixture(scope="module")
def logged(tmp_path_factory) -> tuple[Path, Counter[tuple[str, str]], Counter[str]]:
    """The records, written once for the module: the file, and what was asked and throttled."""
    logs = tmp_path_factory.mktemp("minutes") / "minutes.json"
    return logs, *minute_logs(logs)


def test_keys_hot_for_a_minute_are_named_with_exact_counts_and_throttled_ones_by_name(logged, monkeypatch, tmp_path):
    logs, asked, throttled = logged
    out = tmp_path / "read"
    code, stdout, stderr = in_process(monkeypatch, "traffic", str(logs), "--out", str(out), "--no-report")
    assert code == 0, stdout + stderr
    results = json.loads((out / "results.json").read_text())
    rows = {(r["partition"], r["op_class"]): r for r in results["partitions"]}
    minutes = sorted({key for key, _ in asked if key[:4] == "2026"})
    assert len(minutes) == MINUTES
    for key in minutes:  # each named, its requests exact (every record a first attempt)
        assert rows[(key, "PUT")]["requests"] == asked[(key, "PUT")], key
        assert rows[(key, "GET")]["requests"] == asked[(key, "GET")], key
        assert rows[(key, "ALL")]["offered_peak_eps"] == (WRITES + READS) * 1.0 * 1  # its minute's, not diluted
    named = {f["partition"]: f for f in results["findings"] if f["kind"] == "THROTTLED"}
    assert set(throttled) <= set(named), (sorted(throttled), sorted(named))
    for key, n in throttled.items():
        assert f"{n:,}" in named[key]["message"], named[key]["message"]
    folded = [r for r in results["partitions"] if r["partition"] == "#other" and r["throttled"]]
    assert not folded  # no throttled attempt left among the other partitions
    assert results["keys"]["tracked"] >= MINUTES + len(CUSTOMERS)


def test_the_profile_keeps_each_minute_keys_life_so_advise_and_simulate_judge_it_in_its_minute(logged, monkeypatch, tmp_path):
    """The issue: ``advise --traffic`` on such a read's profile said "keep the design", each minute key's demand spread
    over the whole span. The profile says when each key lived; ``advise --traffic`` and ``simulate --traffic`` judge a
    minute key in its own minute (12 entities/s here: 2,400/s at 100x and twice the peak), and the advice spreads it."""
    logs, profile = logged[0], tmp_path / "traffic.json"
    code, stdout, stderr = in_process(
        monkeypatch, "traffic", str(logs), "--out", str(tmp_path / "read"), "--no-report", "--profile-out", str(profile)
    )
    assert code == 0, stdout + stderr
    rows = json.loads(profile.read_text())["partitions"]
    lives = {row["key"]: row["alive"] for row in rows if "alive" in row}
    assert sorted(lives) == sorted({row["key"] for row in rows if row["key"][:4] == "2026"})  # only the minute keys
    assert lives["20261125T1203"] == [180, 239]
    code, stdout, stderr = in_process(
        monkeypatch, "advise", "--traffic", str(profile), "--scale", "100", "--out", str(tmp_path / "advice")
    )
    assert code == 0, stdout + stderr
    advice = json.loads((tmp_path / "advice" / "results.json").read_text())["advice"]
    assert "2,400 entities/s" in advice["why"] and "120%" in advice["why"] and advice["why"].find("2026") >= 0
    chosen = next(d for d in advice["designs"] if d["family"] == advice["chosen"])
    assert advice["chosen"] in ("shard", "hash-prefix") and chosen["ratio"] < 0.8
    out = tmp_path / "simulated"
    code, stdout, stderr = in_process(
        monkeypatch, "simulate", "--traffic", str(profile), "--scale", "200", "--out", str(out), "--no-report"
    )
    assert code in (0, 3), stdout + stderr
    results = json.loads((out / "results.json").read_text())
    minute = next(r for r in results["partitions"] if r["partition"] == "20261125T1203" and r["op_class"] == "ALL")
    assert minute["offered_peak_eps"] == pytest.approx(2400, rel=0.05) and minute["finding"] == "HOT"
