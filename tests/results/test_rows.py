"""The recorded settings readers judge a run by, typed once: each as the report showed it, missing ones as their
defaults (older files, simulations and traffic reads record fewer)."""

from __future__ import annotations

from dataclasses import fields

from loadtest.results.rows import RecordedSettings, RunInfo


def test_recorded_settings_read_as_their_types_and_missing_ones_as_their_defaults():
    shown = {"arrival_rate": "250", "emulate_throttling": True, "emulator_partition_rate": 500, "fail_on": "HOT", "mix": "read=1"}
    recorded = RecordedSettings.of(shown)
    assert recorded.arrival_rate == 250.0 and recorded.emulate_throttling is True
    assert recorded.emulator_partition_rate == 500.0 and recorded.emulator_account_rate == 0.0
    assert recorded.fail_on == "HOT" and recorded.out == "" and recorded.retry == ""
    assert RecordedSettings.of({}) == RecordedSettings()
    assert RecordedSettings.of({"arrival_rate": "", "emulate_throttling": "", "out": ""}) == RecordedSettings()
    assert {type(f.default) for f in fields(RecordedSettings)} <= {float, bool, str}  # what ``of`` knows how to read


def test_a_runs_facts_give_its_recorded_settings():
    info = RunInfo(
        id="r", started="", duration_s=1.0, target_kind="azurite", table="t", seeded=0, partition_target=2000,
        account_target=20000, profile="current", settings={"arrival_rate": 40.5, "retry": "exponential"},
    )  # fmt: skip
    assert info.recorded.arrival_rate == 40.5 and info.recorded.retry == "exponential"
    assert not info.recorded.emulate_throttling
