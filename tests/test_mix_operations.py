"""The built-in mix's operations run as a user runs them, against a real Azurite: every operation under each kind of
key strategy, through each client, with the users' books (their own rows, the seeded rows they address) kept."""

import pytest
from helpers import results_of

ALL_OPERATIONS = (
    "read=10,scan=5,filter-scan=5,partition-scan=5,table-scan=2,insert=10,upsert=10,replace=5,update=5,"
    "update-etag=5,delete=5,batch=10"
)


@pytest.mark.parametrize(
    "strategy,client",
    [("hash-prefix:4", "fast"), ("guid", "fast"), ("template:{event:3}__{day:2}", "sdk")],  # each strategy, each client
)
def test_every_operation_runs_clean_under_a_key_strategy(loadtest, azurite, tmp_path, strategy, client):
    done = loadtest(
        "run",
        "--client",
        client,
        "-t",
        "2s",
        "-u",
        "3",
        "-r",
        "3",
        "--seed-entities",
        "120",
        "--key-strategy",
        strategy,
        "--skew",
        "zipfian",
        "--mix",
        ALL_OPERATIONS,
        "--batch-size",
        "8",
        "--batch-mix",
        "insert=30,upsert=30,update=20,delete=20",
        "--scan-size",
        "20",
        "--select",
        "n",
        "--out",
        str(tmp_path),
        "--connection-string",
        azurite.connection_string,
    )
    assert done.code == 0, done.output
    data = results_of(tmp_path)
    # no 404s, conflicts or refused batches: the users keep their books. The one expected failure is
    # optimistic concurrency doing its job: two users updating one entity with the same ETag.
    assert set(data["errors"]) <= {"UpdateConditionNotSatisfied"}, data["errors"]
    assert data["keys"]["distinct"] >= 3 and data["keys"]["estimated_entities"] > 0
    assert {r["op_class"] for r in data["partitions"]} >= {"GET", "PUT"}
