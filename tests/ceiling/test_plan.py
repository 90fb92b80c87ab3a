"""The ceiling search's plan bounded at the edge: its steps together run no longer than the longest run."""

from __future__ import annotations

import argparse

import pytest

from loadtest.ceiling.plan import Plan
from loadtest.exit_codes import UsageError
from loadtest.limits import MAX_DURATION_S


def plan(**given: object) -> Plan:
    values = {"ceiling_start": 1, "ceiling_step": 1, "ceiling_max": 1000, "step_time": "168h", "max_p99": 500} | given
    return Plan.from_options(argparse.Namespace(**{k: str(v) for k, v in values.items()}))


def test_steps_that_together_outlast_the_longest_run_are_refused_naming_the_bound():
    """1,000 steps of a week each were accepted (19 years); a search runs no longer than a run may."""
    with pytest.raises(UsageError) as refused:
        plan()
    said = str(refused.value)
    assert said.startswith("--step-time 604,800 s x 1,000 steps") and f"at most {MAX_DURATION_S // 3600}h" in said, said
    assert "\n" not in said
    longest = plan(ceiling_max=MAX_DURATION_S // 900, step_time="900s")  # exactly the longest run: it stands
    assert longest.steps * longest.step_s == MAX_DURATION_S
