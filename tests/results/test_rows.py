"""The recorded settings readers judge a run by, typed once: each as the report showed it, missing ones as their
defaults (older files, simulations and traffic reads record fewer)."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import get_type_hints

import pytest
from test_results import engine_results

from loadtest.results.form import Results
from loadtest.results.rows import RecordedSettings, RunInfo
from loadtest.results.schema import RunSettings


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


def test_every_number_the_typed_view_reads_is_checked_on_read_so_a_hostile_one_is_refused_in_one_line():
    numbers = {f.name for f in fields(RecordedSettings) if isinstance(f.default, float)}
    assert numbers <= {name for name, hint in get_type_hints(RunSettings).items() if hint is float}
    results = engine_results("e1")
    for name in sorted(numbers):
        data = json.loads(results.to_json())
        data["run"]["settings"] |= {"emulate_throttling": True, name: "abc"}
        with pytest.raises(ValueError, match=rf"run\.settings\.{name}: a number"):
            Results.from_json(json.dumps(data))
