"""Engines' per-second samples added: sums and maxima over every engine, each process's CPU apart, the busiest named."""

import pytest

from loadtest.bounds.cpu import cpu_by_process
from loadtest.engines.engine_load import PROCESSES_NAMED, EngineLoad
from loadtest.results.mergeable import sample_columns
from loadtest.typed.reader import read

ENGINES = {
    "a": [(10, {"users": 2, "cpu": 30.0, "workers_cpu": {"w1": 20.0}, "machine_cpu": 50.0, "in_flight": {"GET": 3}})],
    "a2": [(10, {"users": 3, "cpu": 40.0, "servers_cpu": {"azurite": 70.0}, "machine_cpu": 60.0})],
    "b": [(10, {"users": 1, "in_flight": {"GET": 2, "PUT": 1}}), (11, {"users": 4})],
}


@pytest.mark.parametrize("form", ["columns", "pairs"])
def test_users_in_flight_and_the_busiest_machine_add_up_and_each_process_keeps_its_cpu(form):
    """The same samples as an engine writes them (columns) and as results.json listed them before (pairs)."""
    load = EngineLoad()
    for engine, pairs in ENGINES.items():
        load.add(engine, sample_columns(dict(pairs)) if form == "columns" else pairs)
    assert load.samples() == {
        10: {
            "users": 6,
            "workers_cpu": {"engine a": 30.0, "engine a2": 40.0, "engine a worker w1": 20.0},
            "servers_cpu": {"azurite (engine a2)": 70.0},
            "machine_cpu": 60.0,
            "in_flight": {"GET": 5, "PUT": 1},
        },
        11: {"users": 4},
    }
    whole = load.samples()[10]
    assert type(whole["users"]) is int and type(whole["in_flight"]["GET"]) is int  # counts stay whole in results.json


def test_past_ten_processes_the_samples_name_the_busiest_and_the_users_stay_everyones():
    """Twelve engines: the one pegged a third of its seconds is named before those of a higher mean that never were."""
    load = EngineLoad()
    for i in range(11):
        load.add(f"e{i:02}", [(t, {"users": 1, "cpu": 50.0 + i}) for t in range(30)])
    load.add("pegged", [(t, {"users": 1, "cpu": 95.0 if t < 10 else 5.0}) for t in range(30)])
    samples = load.samples()
    named = cpu_by_process(samples.values())
    assert len(named) - 1 == PROCESSES_NAMED  # and "the master", which merged engines never have a figure for
    assert "engine pegged" in named and "engine e00" not in named and "engine e01" not in named
    assert named["engine pegged"][:10] == [95.0] * 10
    assert all(sample["users"] == 12 for sample in samples.values())


def test_sample_columns_hold_a_value_a_second_and_are_checked_on_read():
    from loadtest.results.mergeable import Mergeable

    columns = sample_columns(dict(ENGINES["b"] + [(12, {"users": 1, "cpu": 12.5, "workers_cpu": {"w2": 7.0}})]))
    assert columns == {
        "second": [10, 11, 12],
        "users": [1, 4, 1],
        "cpu": [None, None, 12.5],
        "machine_cpu": [None, None, None],
        "in_flight": {"GET": [2, None, None], "PUT": [1, None, None]},
        "workers_cpu": {"w2": [None, None, 7.0]},
        "servers_cpu": {},
    }
    kind = Mergeable.__annotations__["samples"]
    assert read(kind, columns, "samples") == columns
    cut = {**columns, "in_flight": {"GET": [2, None], "PUT": [1, None, None]}}
    with pytest.raises(ValueError, match=r"^samples\.in_flight\.GET: columns of one length"):
        read(kind, cut, "samples")  # the column cut short named, not the samples as a whole
    with pytest.raises(ValueError, match=r"^samples\.second: columns of one length"):
        read(kind, {**columns, "second": [10, 11, 12, 13]}, "samples")
    with pytest.raises(ValueError, match=r"samples.*users"):
        read(kind, {**columns, "users": [1, "4", 1]}, "samples")
