"""What bounded a run besides the design, against a real Azurite: its queries slowing as the table grows."""

from __future__ import annotations

import json

import pytest
from helpers import run_loadtest

from loadtest.azurite import EmbeddedAzurite


@pytest.mark.parametrize(
    "batch_mix, seconds, grows", [("insert=100", 24, True), ("upsert=100", 10, False)], ids=["table-grows", "table-kept"]
)
def test_azurite_slowing_as_its_table_grows_is_named_and_a_kept_table_raises_none(batch_mix, seconds, grows, tmp_path):
    """30,000 seeded rows, row range scans and batches: batches of new rows grow the table and slow Azurite's scans
    (it filters the whole table); batches that upsert the seeded rows keep its size and its pace."""
    out = tmp_path / "out"
    with EmbeddedAzurite() as azurite:  # a fresh one: Azurite slows with what it holds
        done = run_loadtest(
            "run", "-t", f"{seconds}s", "-u", "6", "-r", "6", "--seed-entities", "30000", "--mix", "scan=50,batch=50",
            "--batch-mix", batch_mix, "--skip-verify", "--out", str(out), "--connection-string", azurite.connection_string,
        )  # fmt: skip
    assert done.code == 0, done.output
    results = json.loads((out / "results.json").read_text())
    gained = sum(row["rows"] for row in results["timeseries"])
    slowed = [f for f in results["findings"] if f["kind"] == "EMULATOR_SLOWED"]
    if grows:
        assert gained >= 60_000, gained
        scans = {f["op_class"]: f["message"] for f in slowed}["GET"]  # the scans (its batches may slow too)
        assert "the table grew from" in scans and "Azurite filters the whole table" in scans, scans
        assert "still the design's" in scans
    else:
        assert gained == 0 and slowed == [], slowed
