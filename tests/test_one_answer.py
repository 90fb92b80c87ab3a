"""One workload, one answer (issue #63): on workloads drawn over the shapes users bring (time-ordered keys at several
resolutions, keys made per entity at either end, templates, skewed sets, hash prefixes, more keys than the counts keep
apart, scans and batches), ``advise`` and ``loadtest simulate`` (run as a user types it, in this process) agree: the
current design's hottest figure (a key, the current period's key, or the range where new keys land) is the
simulation's; the design advise recommends, simulated, asks what the advice says and fits; the figure advise gives a
hash prefix is the one ``simulate`` (and so ``compare --simulate``, which runs it) gives.

On real runs (fewer: each is a run through the throttling emulator against Azurite), the same workload's run, its own
request log read by ``loadtest traffic``, its simulation and advise's closed form agree: the logs name the run's
partitions with its exact counts (the writes whose records name no partition being exactly the run's inserts and
batches), the run's hottest demand is the simulation's and advise's within sampling, and the level the run judges it
at is the simulation's. ``compare --simulate`` gives a design advise's figure for it.

A fixed budget here (``ONE_ANSWER_EXAMPLES``, 4 by default, beside the sweep's finds; ``ONE_ANSWER_RUNS``, 1
beside the docs' append-only keys; ``ONE_ANSWER_COMPARES``, 1); the sweep outside the suite draws hundreds:
``ONE_ANSWER_EXAMPLES=200 ONE_ANSWER_RUNS=20 ONE_ANSWER_COMPARES=10 .venv/bin/pytest -p no:xdist --timeout 0
tests/test_one_answer.py`` (no time limit a test: the runs take 15 s each)
(docs/development.md).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import in_process, run_loadtest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loadtest.advice import designs
from loadtest.advice.search import search
from loadtest.advice.workload import Workload
from loadtest.counting.buckets import UNATTRIBUTED
from loadtest.findings.checklist import MIN_MOVES
from loadtest.findings.levels import WARM_RATIO, level
from loadtest.findings.remedies import HEADROOM
from loadtest.options.rules import DESIGN_FAMILIES
from loadtest.options.settings import Settings, namespace

EXAMPLES = int(os.environ.get("ONE_ANSWER_EXAMPLES", "4"))
RUNS = int(os.environ.get("ONE_ANSWER_RUNS", "1"))
COMPARES = int(os.environ.get("ONE_ANSWER_COMPARES", "1"))
AGREE = 0.05  # relative: the closed form and the simulation of one workload
#: relative, and entities/s: a short run's demand against the model's, two draws of one workload (a key asked 20/s over a
#: 5-second window is 100 draws: a standard deviation of 10 %, and each peak the highest of several windows)
SAMPLED, SAMPLED_EPS = 0.3, 4.0

DESIGNS = st.one_of(
    st.sampled_from(["single", "guid", "append-only", "prepend-only", "timestamp:yyyyMMddHHmmss", "timestamp:yyyyMMddHHmm"]),
    st.integers(2, 400).map(lambda n: f"set:{n}"),
    st.integers(2, 64).map(lambda n: f"hash-prefix:{n}"),
    st.sampled_from(["template:{region:4}-{day:7}", "template:{:12}-orders"]),
    st.integers(2, 16).map(lambda n: f"sharded:{n}:k0000000,k0000003:set:20"),
)
SKEWS = st.sampled_from(["uniform", "zipfian", "hotspot:80,20", "hotspot:50,5"])
OPERATIONS = ("read", "upsert", "insert", "scan", "batch", "delete")


@dataclass(frozen=True)
class Drawn:
    options: dict[str, str]
    peak: float

    def workload(self) -> Workload:
        settings = Settings.from_options(namespace(**self.options), offline=True)
        return Workload(options=self.options, settings=settings, peak=self.peak, growth=1.0, source="options")


def mixes(operations: tuple[str, ...]) -> st.SearchStrategy[str]:
    """A ``--mix`` of some of ``operations``, each weighted 0 to 10 (at least one above 0)."""
    weights = st.lists(st.integers(0, 10), min_size=len(operations), max_size=len(operations)).filter(any)
    return weights.map(lambda w: ",".join(f"{op}={n}" for op, n in zip(operations, w, strict=True) if n))


@st.composite
def workloads(draw: st.DrawFn) -> Drawn:
    options = {
        "key_strategy": draw(DESIGNS),
        "skew": draw(SKEWS),
        "mix": draw(mixes(OPERATIONS)),
        "scan_size": str(draw(st.sampled_from([10, 100, 500]))),
        "batch_size": str(draw(st.sampled_from([10, 100]))),
        "seed_entities": str(draw(st.sampled_from([200, 1000, 5000]))),
    }
    return Drawn(options, float(draw(st.sampled_from([20, 150, 600, 3000]))))


def simulated(monkeypatch: pytest.MonkeyPatch, out: Path, w: Workload, **design: str) -> dict:
    """``loadtest simulate`` of the workload (under ``design``'s options), as a user types it."""
    argv = [*w.argv(**design), "--arrival-rate", f"{w.rate:g}", "-t", "30s", "--out", str(out), "--no-report", "--overwrite"]
    code, stdout, stderr = in_process(monkeypatch, "simulate", *argv)
    assert code in (0, 3), stdout + stderr
    return json.loads((out / "results.json").read_text())


def hottest(results: dict) -> float:
    """The simulation's hottest demand at peak: one partition's, or the range where new keys land as one (where its end
    kept moving: the range is then more than its end's one key, whether or not most writes went there)."""
    keys = [r["offered_peak_eps"] for r in results["partitions"] if r["op_class"] == "ALL" and r["partition"][:1] != "#"]
    keys += [r["offered_peak_eps"] for r in results["partitions"] if r["op_class"] != "ALL" and r["partition"][:1] != "#"]
    ends = [e["offered_peak_eps"] for e in results["key_order"].values() if e["moves"] >= MIN_MOVES]
    return max([*keys, *ends], default=0.0)


def agree(said: float, measured: float) -> bool:
    return abs(said - measured) <= AGREE * max(said, measured) + 0.5  # half an entity: rounding of near-idle keys


#: The sweep's finds: a key read once is no key alive for a second (its peak the run's window's, as the closed form's).
SPARSE = Drawn(
    {"key_strategy": "guid", "skew": "uniform", "mix": "scan=1,delete=1", "scan_size": "10", "seed_entities": "200"}, 20.0
)

#: Upserts of new keys at the end beside deletes of seeded ones: half the writes at the end, APPEND_ONLY's threshold.
HALF_AT_THE_END = Drawn({"key_strategy": "append-only", "mix": "upsert=1,delete=1", "seed_entities": "200"}, 20.0)

#: A design sharded already, hot still: its buckets sharded again (refused as a nested key strategy, once a crash).
SHARDED_AGAIN = Drawn({"key_strategy": "sharded:2:k0000000,k0000003:set:20", "skew": "hotspot:80,20", "mix": "upsert=1"}, 6000.0)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=workloads(), prefixes=st.integers(2, 300))
@example(drawn=SPARSE, prefixes=2)
@example(drawn=HALF_AT_THE_END, prefixes=2)
@example(drawn=SHARDED_AGAIN, prefixes=2)
def test_advise_and_simulate_give_one_answer_on_any_drawn_workload(drawn, prefixes, monkeypatch, tmp_path):
    w = drawn.workload()
    found = search(w, DESIGN_FAMILIES)
    said = found.current.load.hottest()[1]
    measured = hottest(simulated(monkeypatch, tmp_path / "current", w))
    assert agree(said, measured), (drawn, found.current.load.hottest(), measured)

    prefix = designs._hash_prefix(w, prefixes)  # what advise (and compare --simulate) says of a hash prefix
    measured = hottest(simulated(monkeypatch, tmp_path / "prefix", w, **prefix.run_options))
    assert agree(prefix.load.hottest()[1], measured), (drawn, prefixes, prefix.load.hottest(), measured)

    chosen = found.chosen
    if chosen is None or chosen.design is None or chosen.family in ("current", "accounts") or not chosen.design.run_options:
        return
    design = chosen.design
    said = design.load.hottest()[1]
    assert said < HEADROOM * w.settings.partition_target
    measured = hottest(simulated(monkeypatch, tmp_path / "chosen", w, **design.run_options))
    assert agree(said, measured), (drawn, design.label, said, measured)


RUN_DESIGNS = st.one_of(
    st.sampled_from(["single", "append-only", "prepend-only", "timestamp:yyyyMMddHHmmss", "template:{:12}-orders"]),
    st.integers(2, 40).map(lambda n: f"set:{n}"),
    st.integers(2, 16).map(lambda n: f"hash-prefix:{n}"),
    st.integers(2, 6).map(lambda n: f"sharded:{n}:k0000000:set:8"),
)
RUN_OPERATIONS = ("read", "upsert", "insert", "scan", "batch")
#: the throttling emulator's budget a partition, and the target the runs are judged by (a service scaled down)
BUDGET = 100
EMULATED = ("--emulate-throttling", "--emulator-partition-rate", str(BUDGET))
#: the docs' append-only anti-pattern: a key a second, every write an insert to it
A_KEY_A_SECOND = Drawn(
    {"key_strategy": "timestamp:yyyyMMddHHmmss", "mix": "insert=1", "seed_entities": "200", "partition_target": str(BUDGET)},
    150.0,
)


#: The sweep's find: scans over 189 keys, more than are counted apart, named the same 50 keys as the request log with
#: fewer requests (the keys that joined the hottest late: their first seconds folded, unmarked; now ``partial``).
SCANS_OVER_MORE_KEYS = Drawn(
    {"key_strategy": "append-only", "skew": "uniform", "mix": "scan=1", "scan_size": "10", "seed_entities": "200",
     "partition_target": str(BUDGET)},
    40.0,
)  # fmt: skip


@st.composite
def run_workloads(draw: st.DrawFn) -> Drawn:
    options = {
        "key_strategy": draw(RUN_DESIGNS),
        "skew": draw(SKEWS),
        "mix": draw(mixes(RUN_OPERATIONS)),
        "scan_size": "10",
        "batch_size": "10",
        "seed_entities": "200",
        "partition_target": str(BUDGET),
    }
    return Drawn(options, float(draw(st.sampled_from([40, 90, 150]))))


def by_partition(results: dict, op_class: str) -> dict[str, tuple[int, int, bool]]:
    """(requests, throttled attempts, partial) of each named partition's ``op_class`` (no group: the other partitions, a
    range; partial: counted apart only once it was among the hottest, its figures at least what they say)."""
    rows = [r for r in results["partitions"] if r["op_class"] == op_class and r["partition"][:1] != "#"]
    return {r["partition"]: (r["requests"], r["throttled"], r.get("partial", False)) for r in rows}


def judged(results: dict) -> tuple[float, str]:
    """The hottest demand's ratio to the target its run judged by, and the heaviest level a finding gave."""
    order = ["HOT", "WARM", "COOL"]
    levels = [f["kind"] for f in results["findings"] if f["kind"] in order]
    return hottest(results) / results["run"]["partition_target"], min(levels, key=order.index, default="COOL")


def near_a_level(ratio: float) -> bool:
    """Within sampling of where the level changes: two draws of one workload may fall either side."""
    return any(abs(ratio - edge) <= SAMPLED * edge + SAMPLED_EPS / BUDGET for edge in (WARM_RATIO, 1.0))


@settings(max_examples=RUNS, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=run_workloads())
@example(drawn=A_KEY_A_SECOND)
@example(drawn=SCANS_OVER_MORE_KEYS)
def test_a_run_its_logs_its_simulation_and_advise_give_one_answer(drawn, azurite, monkeypatch, tmp_path):
    out = Path(tempfile.mkdtemp(dir=tmp_path))
    w = drawn.workload()
    argv = [*w.argv(), *EMULATED, "--arrival-rate", f"{w.rate:g}", "-t", "15s", "--no-report", "--overwrite"]
    log = out / "requests.json"
    done = run_loadtest(
        "run", *argv, "--request-log", str(log), "--out", str(out / "run"), "--connection-string", azurite.connection_string
    )
    assert done.code in (0, 3) and "Traceback" not in done.output, done.output
    ran = json.loads((out / "run" / "results.json").read_text())

    # the run's own request log: every partition and op class it names, with the run's exact counts
    code, stdout, stderr = in_process(
        monkeypatch, "traffic", str(log), "--client-request-id", f"{ran['run']['id']}-", "--out", str(out / "logs"),
        "--no-report", "--overwrite", "--partition-target", str(BUDGET),
    )  # fmt: skip
    assert code in (0, 3) and "Traceback" not in stdout + stderr, stdout + stderr
    read = json.loads((out / "logs" / "results.json").read_text())
    assert read["logs"]["requests"] == sum(r["requests"] for r in ran["partitions"] if r["op_class"] != "ALL")
    for op_class in ("GET", "PUT", "DELETE"):
        run_rows, log_rows = by_partition(ran, op_class), by_partition(read, op_class)
        if ran["keys"]["distinct"] <= ran["keys"]["tracked"]:  # every key named in both
            assert log_rows.keys() - {UNATTRIBUTED} <= run_rows.keys(), (op_class, drawn)
        for key in run_rows.keys() & log_rows.keys():
            (ran_n, ran_throttled, ran_partial), (logged_n, logged_throttled, logged_partial) = run_rows[key], log_rows[key]
            if ran_partial or logged_partial:  # at least what it says: never more than the other, exact, reading
                assert logged_partial or ran_n <= logged_n or op_class == "PUT", (key, op_class, drawn)
                assert ran_partial or logged_n <= ran_n, (key, op_class, drawn)
            elif op_class == "PUT":  # an insert's record names no partition: the logs place no more than the run did
                assert logged_n <= ran_n, (key, drawn)
            else:
                assert (logged_n, logged_throttled) == (ran_n, ran_throttled), (key, op_class, drawn)
    unplaced = read["logs"]["unattributed"]
    assert set(unplaced) <= {"InsertEntity", "EntityGroupTransaction"}, unplaced

    # its simulation and advise's closed form: the same hottest demand, within what two draws of it differ by
    modelled = [a for a in argv if a != "--emulate-throttling"]  # a simulation is the emulator's model: nothing to turn on
    code, stdout, stderr = in_process(monkeypatch, "simulate", *modelled, "--out", str(out / "simulated"))
    assert code in (0, 3), stdout + stderr
    simulation = json.loads((out / "simulated" / "results.json").read_text())
    said = search(w, DESIGN_FAMILIES).current.load.hottest()[1]
    for figures in (simulation, ran):
        assert sampled_alike(said, hottest(figures)), (drawn, said, hottest(figures), figures["run"]["target_kind"])
    (ratio, level_run), (_, level_simulated) = judged(ran), judged(simulation)
    assert ran["run"]["partition_target"] == simulation["run"]["partition_target"] == BUDGET
    if not near_a_level(said / BUDGET):
        assert level_run == level_simulated == level(said / BUDGET), (drawn, said, ratio, level_run, level_simulated)


def sampled_alike(model: float, measured: float) -> bool:
    return abs(model - measured) <= SAMPLED * max(model, measured) + SAMPLED_EPS


@settings(max_examples=COMPARES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=workloads(), prefixes=st.integers(2, 300))
@example(drawn=SHARDED_AGAIN, prefixes=2)  # the sweep's find: its design's own commas cut apart by --strategies
def test_compare_simulate_gives_a_design_the_figure_advise_gives_it(drawn, prefixes, monkeypatch, tmp_path):
    """``compare --simulate`` as a user types it (a simulation a strategy, in its own process): the hash prefix's
    hottest figure is advise's for the same design."""
    w = drawn.workload()
    prefix = designs._hash_prefix(w, prefixes)
    out = Path(tempfile.mkdtemp(dir=tmp_path))
    strategy = prefix.run_options["key_strategy"]
    options = [a for a in w.argv() if a not in ("--key-strategy", w.options["key_strategy"])]
    code, stdout, stderr = in_process(
        monkeypatch, "compare", "--simulate", "--strategies", f"{w.options['key_strategy']},{strategy}", *options,
        "--arrival-rate", f"{w.rate:g}", "-t", "30s", "--out", str(out),
    )  # fmt: skip
    assert code in (0, 3), stdout + stderr
    comparison = json.loads((out / "comparison.json").read_text())
    figures = {s["strategy"]: s["hottest_peak_eps"] for s in comparison["strategies"]}
    assert agree(prefix.load.hottest()[1], figures[strategy]), (drawn, prefixes, prefix.load.hottest(), figures)
