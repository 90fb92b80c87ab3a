"""HOT's last words: the command line that asks ``loadtest advise`` about the same workload, for each source a HOT
finding comes from (a run, a simulation of options or of a profile, production's logs, advice's own results)."""

import shlex

from helpers import run_info

from loadtest.findings.levels import advise_line
from loadtest.results.form import AccountRow, Results


def results(**run) -> Results:
    account = AccountRow(entities=0, mean_eps=0, peak_eps=0, target=20000, ratio=0)
    return Results(run=run_info(**run), partitions=[], account=account)


def asked(line: str) -> list[str]:
    return shlex.split(line.split("Ask for the design that fits, sized and costed: ")[1])


def test_a_run_and_a_simulation_ask_from_their_results_where_they_were_written():
    assert asked(advise_line(results(id="20261128-1"))) == ["loadtest", "advise", "--from", "reports/20261128-1/results.json"]
    mine = results(id="x", settings={"out": "my runs/a b"}, simulated=True, target_kind="simulation")
    assert asked(advise_line(mine)) == ["loadtest", "advise", "--from", "my runs/a b/results.json"]  # quoted, one word


def test_a_replayed_profile_and_production_logs_ask_with_the_profile():
    replay = results(target_kind="simulation", simulated=True)
    replay.simulation = {"traffic": {"profile": "p.json", "scale": 10.0}}  # type: ignore[typeddict-item]
    assert asked(advise_line(replay)) == ["loadtest", "advise", "--traffic", "p.json", "--scale", "10"]
    logs = results(target_kind="logs", settings={"profile_out": "traffic.json"})
    assert asked(advise_line(logs)) == ["loadtest", "advise", "--traffic", "traffic.json"]
    unwritten = advise_line(results(target_kind="logs"))
    assert "--profile-out traffic.json" in unwritten and "--traffic traffic.json" in unwritten


def test_advice_does_not_send_its_reader_back_to_itself():
    assert advise_line(results(target_kind="advice")) == ""
