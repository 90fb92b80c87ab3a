"""The targets a run is judged against, defaulted in one place: those given, else the profile's."""

from __future__ import annotations

from loadtest.service.scale_targets import PROFILES, judged_against


def test_given_targets_stand_and_missing_ones_are_the_profiles():
    assert judged_against("current") == PROFILES["current"] == (2000, 20000)
    assert judged_against("legacy", 0, 7000) == (500, 7000)
    assert judged_against("current", 150, 0) == (150, 20000)
