"""The docs' append-only anti-pattern judged as the service serves it (issue #63): a key a second at 150 inserts a
second, each new key past every earlier one, through the partition layer's model at 100 entities/s a partition. The
range where new keys land is one budget (throttled), APPEND_ONLY says so with the range's figure, and the keys that
landed there are throttled as one range, in one THROTTLED finding, not one a key; per-key budgets only, nothing is."""

from __future__ import annotations

import json

import pytest
from helpers import in_process

from loadtest.report.headline import verdict_sentences
from loadtest.results.form import Results

RUN = ["--key-strategy", "timestamp:yyyyMMddHHmmss", "--mix", "insert=100", "--arrival-rate", "150"]
RUN += ["--emulator-partition-rate", "100", "-t", "60s", "--no-report", "--overwrite"]


def simulated(monkeypatch, out, *extra: str) -> dict:
    code, stdout, stderr = in_process(monkeypatch, "simulate", *RUN, *extra, "--out", str(out))
    assert code in (0, 3), stdout + stderr
    return json.loads((out / "results.json").read_text())


def test_a_key_a_second_is_one_range_throttled_as_one_and_named_once(monkeypatch, tmp_path):
    results = simulated(monkeypatch, tmp_path / "ranges")
    end = results["key_order"]["append"]
    assert end["offered_peak_eps"] == pytest.approx(150, rel=0.02) and end["peak_eps"] < 150
    assert end["mean_eps"] == pytest.approx(100, rel=0.1)  # the range's budget, whatever the keys
    found = {f["kind"]: f for f in results["findings"]}
    assert "150 entities/s at peak" in found["APPEND_ONLY"]["message"] and "moved to a new key" in found["APPEND_ONLY"]["message"]
    ranged = [f for f in results["findings"] if f["kind"] == "THROTTLED" and f["partition"] == "#newest"]
    assert len(ranged) == 1 and "the range's own load (150 entities/s at peak" in ranged[0]["message"]
    first, last = sorted(end["landed"])
    apart = [f["partition"] for f in results["findings"] if f["kind"] == "THROTTLED" and f["partition"] != "#newest"]
    assert not [p for p in apart if first <= p <= last]  # a landed key is the range's, never a finding of its own
    assert "the range where new keys land at each end of the key order as one partition" in results["simulation"]["model"]


def test_per_key_budgets_only_throttle_no_key_a_second_under_its_own_budget(monkeypatch, tmp_path):
    results = simulated(monkeypatch, tmp_path / "per-key", "--emulator-per-key-only")
    assert results["key_order"]["append"]["throttled"] == 0 and results["attempts"] == sum(
        r["requests"] for r in results["partitions"] if r["op_class"] != "ALL"
    )
    assert "per-key budgets only" in results["simulation"]["model"]
    assert "APPEND_ONLY" in {f["kind"] for f in results["findings"]}  # the anti-pattern is the design's, throttled or not


def test_against_the_budgets_own_target_the_range_is_hot_once_with_its_keys_as_its_part(monkeypatch, tmp_path):
    """Judged against the emulated 100/s (the budget given stands for the target where none is given, a service scaled
    down), each per-second key is HOT over its own life (150/s in its second, not 15 over a 10-second window) and so is
    the range: one HOT for the range, naming how many of its keys were, not one a key. A target given is the level's."""
    results = simulated(monkeypatch, tmp_path / "judged")
    assert results["run"]["partition_target"] == 100
    # one voice: the report's first sentence names the range too, not a key alive for a second of it
    (verdict,) = verdict_sentences(Results.load_file(tmp_path / "judged" / "results.json"))
    assert "the hottest partition is the range where new keys land" in verdict and "150% of the 100/s" in verdict
    assert "(HOT)" in verdict, verdict
    hot = [f for f in results["findings"] if f["kind"] == "HOT"]
    ranged = [f for f in hot if f["partition"] == "#newest"]
    assert len(ranged) == 1 and "150% of the 100/s partition target" in ranged[0]["message"]
    first, last = sorted(results["key_order"]["append"]["landed"])
    assert not [f for f in hot if f["partition"] != "#newest" and first <= f["partition"] <= last]
    rows = [r for r in results["partitions"] if r["op_class"] == "PUT" and first <= r["partition"] <= last]  # all PUT
    assert rows and all(r["finding"] == "HOT" and r["life_s"] == 1 for r in rows[1:-1])  # each key's own level kept
    assert f"{sum(r['finding'] == 'HOT' for r in rows):,} HOT" in ranged[0]["message"]

    given = simulated(monkeypatch, tmp_path / "given", "--partition-target", "2000")
    found = {f["kind"]: f for f in given["findings"]}
    assert given["run"]["partition_target"] == 2000 and "HOT" not in found
    assert "8% of the 2,000/s partition target" in found["APPEND_ONLY"]["message"] and "THROTTLED" in found
