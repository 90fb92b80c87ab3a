"""The built-in mix's operations run as a user runs them, against a real Azurite: every operation under each kind of
key strategy, through each client, with the users' books (their own rows, the seeded rows they address) kept."""

import pytest
from helpers import EVERY_OPERATION_RUNS, results_of


@pytest.mark.parametrize("strategy,client", EVERY_OPERATION_RUNS)
def test_every_operation_runs_clean_under_a_key_strategy(every_operation_run, strategy, client):
    """The runs are shared with ``test_serverlogs`` (``every_operation_run``), which reads their request ids."""
    out, done = every_operation_run(strategy, client)
    assert done.code == 0, done.output
    data = results_of(out)
    assert data["run"]["settings"]["client"] == client
    # no 404s, conflicts or refused batches: the users keep their books. The one expected failure is
    # optimistic concurrency doing its job: two users updating one entity with the same ETag.
    assert set(data["errors"]) <= {"UpdateConditionNotSatisfied"}, data["errors"]
    assert data["keys"]["distinct"] >= 3 and data["keys"]["estimated_entities"] > 0
    assert {r["op_class"] for r in data["partitions"]} >= {"GET", "PUT"}
