"""``loadtest advise`` as a user runs it (in this process): bad input refused in one line with nothing written, the
outputs every command writes, and the command line HOT findings end with, which asks advise about that workload."""

import json
import shlex
import xml.etree.ElementTree as ET

import pytest
from helpers import KEY, in_process
from lxml import etree

from loadtest.account.connection_string import CONNECTION_STRING_ENV
from loadtest.child_process import free_port
from loadtest.workload.traffic_profile import FORMAT, VERSION

SCHEMAS = __import__("pathlib").Path(__file__).parents[1] / "data"


def empty_profile(path) -> str:
    """A traffic profile whose logs named no partition (only inserts, which name none)."""
    path.write_text(
        json.dumps(
            {
                "format": FORMAT, "version": VERSION, "span": {"start": 1_700_000_000, "seconds": 60}, "records": 10,
                "requests": 10, "hashed_keys": False, "entity_bytes": 1024, "rate": {"bin_s": 60, "requests": [10]},
                "operations": [{"operation": "QueryEntity", "op_class": "GET", "requests": 10, "entities": 10}],
                "partitions": [], "tail": [], "unattributed": {"GET": {"requests": 10, "entities": 10}},
            }
        )
    )  # fmt: skip
    return str(path)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--arrival-rate", "400", "--growth", "0"], "--growth '0': must be a multiple above 0"),
        (["--arrival-rate", "400", "--growth", "-2"], "--growth '-2'"),
        (["--arrival-rate", "400", "--families", ""], "--families '': one or more design families"),
        (["--arrival-rate", "400", "--families", "shard,hash"], "valid: shard, hash-prefix, finer, seconds-first, guid"),
        (["--arrival-rate", "400", "--mix", "read=0"], "--mix 'read=0'"),
        ([], "--arrival-rate: advise needs the workload's peak"),
        (["--from", "{tmp}/report.html"], "not a partition-stress results.json"),
        (["--from", "{tmp}/missing.json"], "no such file"),
        (["--traffic", "{profile}", "--arrival-rate", "100"], "the logs named no partition"),
        (["--traffic", "{profile}", "--key-strategy", "guid"], "--key-strategy: with --traffic the profile's partitions"),
        (["--scale", "2", "--arrival-rate", "100"], "--scale: only with --traffic FILE"),
        (["--arrival-rate", "400", "--connection-string", "UseDevelopmentStorage=true"], "--connection-string: advise sends"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(monkeypatch, tmp_path, args, named):
    (tmp_path / "report.html").write_text("<html></html>")
    profile = empty_profile(tmp_path / "empty.json")
    out = tmp_path / "out"
    argv = [a.format(tmp=tmp_path, profile=profile) for a in args]
    code, stdout, stderr = in_process(monkeypatch, "advise", *argv, "--out", str(out))
    assert code == 2, stdout + stderr
    assert stderr.count("\n") == 1 and named in stderr and "Traceback" not in stderr, stderr
    assert not out.exists() and stdout == ""


@pytest.fixture(scope="module")
def simulated_hot(tmp_path_factory):
    """A simulation of one hot key: its HOT finding names the advise command line."""
    folder = tmp_path_factory.mktemp("hot")
    with pytest.MonkeyPatch.context() as monkeypatch:
        code, out, err = in_process(
            monkeypatch, "simulate", "--key-strategy", "set:4", "--skew", "hotspot:70,25", "--arrival-rate", "900",
            "-t", "15s", "--out", str(folder / "sim"), "--no-report",
        )  # fmt: skip
    assert code == 0, out + err
    return folder


def test_a_hot_finding_ends_with_the_command_that_asks_advise_and_that_command_answers(simulated_hot, monkeypatch):
    data = json.loads((simulated_hot / "sim" / "results.json").read_text())
    (hot,) = [f for f in data["findings"] if f["kind"] == "HOT"]
    line = hot["remedy"].split("Ask for the design that fits, sized and costed: ")[1]
    argv = shlex.split(line)
    assert argv[:2] == ["loadtest", "advise"] and argv[2:] == ["--from", str(simulated_hot / "sim" / "results.json")]
    out, junit = simulated_hot / "advice", simulated_hot / "advice.xml"
    code, stdout, stderr = in_process(monkeypatch, *argv[1:], "--out", str(out), "--junit", str(junit))
    assert code == 0, stdout + stderr
    advice = json.loads((out / "results.json").read_text())["advice"]
    assert advice["source"] == f"--from {simulated_hot / 'sim' / 'results.json'}" and advice["peak_operations_per_s"] == 900
    assert "--key-strategy" in advice["workload"] and "hotspot:70,25" in advice["workload"]  # the workload it recorded
    shard = next(d for d in advice["designs"] if d["family"] == "shard")
    assert advice["chosen"] not in ("", "current") and shard["spread_keys"][0] == "k0000000"  # the hottest value first
    lines = stdout.splitlines()
    assert lines[0].startswith("Advice at 1,800 operations/s (the peak 900/s x growth 2)")
    assert advice["recommendation"] in lines[2]
    assert lines[-2] == f"Report: {out / 'report.html'}" and lines[-1] == f"JUnit: {junit}"
    suites = ET.parse(junit).getroot()
    for xsd in ("junit-ant.xsd", "junit-jenkins.xsd"):
        assert etree.XMLSchema(etree.parse(str(SCHEMAS / xsd))).validate(etree.parse(str(junit))), xsd
    cases = {c.get("name"): c for c in suites.iter("testcase")}
    assert "a design fits" in cases and cases["a design fits"].find("failure") is None
    results = json.loads((out / "results.json").read_text())
    assert results["run"]["target_kind"] == "advice" and results["run"]["simulated"]
    assert not any("Ask for the design that fits" in f["remedy"] for f in results["findings"])  # not advise's own


def test_a_design_that_cannot_fit_fails_the_advice_case_and_says_why(monkeypatch, tmp_path):
    junit = tmp_path / "advice.xml"
    code, stdout, stderr = in_process(
        monkeypatch, "advise", "--key-strategy", "append-only", "--mix", "insert=100", "--arrival-rate", "3000",
        "--families", "seconds-first", "--out", str(tmp_path / "out"), "--junit", str(junit),
    )  # fmt: skip
    assert code == 0, stdout + stderr  # no --fail-on: the advice is said, the exit code is --fail-on's
    case = next(c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "a design fits")
    assert case.find("failure").get("message").startswith("No design searched fits")
    assert "does not fit: seconds-first: even at N = 60" in stdout


def test_a_verifying_run_that_cannot_reach_its_target_keeps_the_advice_and_says_so(monkeypatch, tmp_path):
    """The target refuses every connection (nothing listens on its port): each verifying run fails before its load;
    the search's answer is still written whole, the proof says what stopped it, the exit code is a run that could not
    be done (1), the JUnit case is failed, and the account key is nowhere."""
    port = free_port()  # free: nothing listens there
    secret = f"DefaultEndpointsProtocol=http;AccountName=acct;AccountKey={KEY};TableEndpoint=http://127.0.0.1:{port}/acct;"
    out, junit = tmp_path / "out", tmp_path / "advice.xml"
    code, stdout, stderr = in_process(
        monkeypatch, "advise", "--arrival-rate", "400", "--families", "shard", "--verify", "--verify-time", "3s",
        "--out", str(out), "--junit", str(junit), env={CONNECTION_STRING_ENV: secret},
    )  # fmt: skip
    assert code == 1, stdout + stderr
    advice = json.loads((out / "results.json").read_text())["advice"]
    assert advice["chosen"] == "shard" and (out / "report.html").is_file()
    entries = advice["verification"]["designs"]
    assert [e["family"] for e in entries] == ["current", "shard"] and not advice["verification"]["agrees"]
    assert all(e["why_not"].startswith("the verifying run failed") and "partitions" not in e for e in entries)
    failed = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    assert {c.get("name") for c in failed} >= {"verify current 0", "verify shard 6"}
    assert "verify as it is (single): the verifying run failed" in stdout
    for text in (stdout, stderr, (out / "results.json").read_text(), (out / "report.html").read_text(), junit.read_text()):
        assert KEY not in text
