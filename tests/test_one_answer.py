"""One workload, one answer (issue #63): on workloads drawn over the shapes users bring (time-ordered keys at several
resolutions, keys made per entity at either end, templates, skewed sets, hash prefixes, more keys than the counts keep
apart, scans and batches), ``advise`` and ``loadtest simulate`` (run as a user types it, in this process) agree: the
current design's hottest figure (a key, the current period's key, or the range where new keys land) is the
simulation's; the design advise recommends, simulated, asks what the advice says and fits; the figure advise gives a
hash prefix is the one ``simulate`` (and so ``compare --simulate``, which runs it) gives.

A fixed budget here (``ONE_ANSWER_EXAMPLES``, 4 by default, beside the sweep's finds); the sweep outside the suite draws hundreds:
``ONE_ANSWER_EXAMPLES=200 .venv/bin/pytest -p no:xdist tests/test_one_answer.py`` (docs/development.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import in_process
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loadtest.advice import designs
from loadtest.advice.search import search
from loadtest.advice.workload import Workload
from loadtest.findings.checklist import MIN_MOVES
from loadtest.findings.remedies import HEADROOM
from loadtest.options.rules import DESIGN_FAMILIES
from loadtest.options.settings import Settings, namespace

EXAMPLES = int(os.environ.get("ONE_ANSWER_EXAMPLES", "4"))
AGREE = 0.05  # relative: the closed form and the simulation of one workload

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


@st.composite
def workloads(draw: st.DrawFn) -> Drawn:
    weights = draw(st.lists(st.integers(0, 10), min_size=len(OPERATIONS), max_size=len(OPERATIONS)).filter(any))
    mix = ",".join(f"{op}={w}" for op, w in zip(OPERATIONS, weights, strict=True) if w)
    options = {
        "key_strategy": draw(DESIGNS),
        "skew": draw(SKEWS),
        "mix": mix,
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
