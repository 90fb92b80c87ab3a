"""The report's first words say what served the figures, never a part that did not run: here, which ranges the
throttling emulator's (or a simulation's) budgets modelled."""

from __future__ import annotations

import pytest
from helpers import run_info

from loadtest.report.headline import what_ran
from loadtest.results.form import AccountRow, Results

EMULATED = {"emulate_throttling": True, "emulator_partition_rate": 100.0, "emulator_account_rate": 20000.0}


def _results(**settings) -> Results:
    return Results(
        run=run_info(settings={**EMULATED, **settings}, emulator=True),
        partitions=[],
        account=AccountRow(entities=0, mean_eps=0, peak_eps=0, target=20000, ratio=0),
    )


@pytest.mark.parametrize(
    ("settings", "said", "not_said"),
    [
        ({}, "the range where new keys land at each end of the key order as one partition", "per-key budgets only"),
        ({"emulator_per_key_only": True}, "per-key budgets only", "as one partition"),
        ({"emulator_server_rate": 4000.0}, "range partitions on servers of 4,000 entities/s", "per-key budgets only"),
    ],
)
def test_the_note_says_which_ranges_the_emulators_budgets_modelled(settings, said, not_said):
    words = what_ran(_results(**settings))
    assert words.startswith("Measured on Azurite behind the throttling emulator") and said in words and not_said not in words
