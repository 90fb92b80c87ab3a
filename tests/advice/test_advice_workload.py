"""``advise --from``: a results.json's recorded settings read as the workload, a hostile one refused in one line."""

from __future__ import annotations

import json

import pytest

from loadtest.advice.workload import from_results
from loadtest.exit_codes import UsageError


@pytest.mark.parametrize("rate", ["abc", [1], {"a": 1}])
def test_a_recorded_rate_that_is_no_number_is_one_line_naming_the_file(tmp_path, rate):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"run": {"settings": {"arrival_rate": rate}, "target_kind": "azurite-embedded"}}))
    with pytest.raises(UsageError, match=r"^--from .*results\.json: not a partition-stress results\.json"):
        from_results(str(path), growth=2.0)
