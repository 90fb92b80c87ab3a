"""Engines' per-second samples added: sums and maxima over every engine, each process's CPU apart, the busiest named."""

from loadtest.bounds.cpu import cpu_by_process
from loadtest.engines.engine_load import PROCESSES_NAMED, EngineLoad


def test_users_in_flight_and_the_busiest_machine_add_up_and_each_process_keeps_its_cpu():
    load = EngineLoad()
    load.add("a", [(10, {"users": 2, "cpu": 30.0, "workers_cpu": {"w1": 20.0}, "machine_cpu": 50.0, "in_flight": {"GET": 3}})])
    load.add("a2", [(10, {"users": 3, "cpu": 40.0, "servers_cpu": {"azurite": 70.0}, "machine_cpu": 60.0})])
    load.add("b", [(10, {"users": 1, "in_flight": {"GET": 2, "PUT": 1}}), (11, {"users": 4})])
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
