"""``--junit FILE``: the verdict as JUnit XML, valid against Ant's form and the Jenkins xUnit plugin's (tests/data, checked
by libxml2 through lxml), failed exactly where ``--fail-on``'s checks fail the exit code, with every string from the
input shown as text and every secret redacted; written by the commands that judge, refused at the edge in one line."""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import in_process, run_info
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from synthetic import recorded

from loadtest.command_line.compare import _suite
from loadtest.findings.assess import FindingCheck, assess, checks_for, exit_code
from loadtest.outputs import RESULTS_FILE
from loadtest.report import junit
from loadtest.results.comparison import StrategyOutcome
from loadtest.results.finding_kinds import FAIL_ON, RUN_FAILURES
from loadtest.results.form import Finding, FindingKind, Results
from loadtest.results.summary import build

K = FindingKind
DATA = Path(__file__).parents[1] / "data"
SCHEMAS = {name: etree.XMLSchema(etree.parse(str(DATA / f"junit-{name}.xsd"))) for name in ("ant", "jenkins")}
HOSTILE_KEY = "<script>&\"'"
SECRET = "c2VjcmV0IGtleSBub2JvZHkgc2hvdWxkIHNlZQ=="
CONNECTION = f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={SECRET};EndpointSuffix=core.windows.net"


def valid(data: bytes) -> etree._Element:
    """The file parsed (well-formed, or ``XMLSyntaxError``) and valid against both schemas."""
    document = etree.fromstring(data)
    for name, schema in SCHEMAS.items():
        assert schema.validate(document), (name, str(schema.error_log))
    return document


def rendered(results: Results, fail_on: tuple[str, ...] = ()) -> etree._Element:
    return valid(junit.to_bytes([junit.suite(results, checks_kinds(fail_on))]))


def checks_kinds(fail_on: tuple[str, ...]) -> tuple[FindingKind, ...]:
    return tuple(FindingKind(kind.upper()) for kind in fail_on)


def cases(document: etree._Element) -> dict[str, etree._Element]:
    return {case.get("name"): case for case in document.iter("testcase")}


def failed(document: etree._Element, tag: str = "failure") -> dict[str, etree._Element]:
    """The cases that failed (``tag``: or errored), by name: their ``<failure>``."""
    return {name: case.find(tag) for name, case in cases(document).items() if case.find(tag) is not None}


def judged(per_partition: dict[str, int], seconds: int = 12, **info) -> Results:
    """A steady run: each partition's entities/s in PUTs, judged as a run's are."""
    load = {t: [{"op": "insert", "op_class": "PUT", "partition": p, "entities": n} for p, n in per_partition.items()]
            for t in range(seconds)}  # fmt: skip
    return assess(build(recorded(load), run_info(**info)))


@functools.cache
def troubled() -> Results:
    """A run with levels, throttling and errors: hot over its target, warm near it, cold under it."""
    load = {t: [{"op": "insert", "op_class": "PUT", "partition": p, "entities": n} for p, n in (("hot", 100), ("warm", 45),
            ("cold", 5))] for t in range(12)}  # fmt: skip
    load[3] += [{"op": "insert", "op_class": "PUT", "partition": "hot", "error": "ServerBusy", "throttled": 4, "attempts": 4}]
    load[4] += [{"op": "insert", "op_class": "PUT", "partition": "cold", "error": "EntityAlreadyExists"}] * 2
    return assess(build(recorded(load), run_info(partition_target=50, account_target=170)))


def test_a_hot_partition_fails_its_level_case_with_its_findings_message_and_nothing_else_fails():
    results = judged({"hot": 100, "cold": 5}, partition_target=50)
    document = rendered(results, ("hot",))
    (suite,) = document.iter("testsuite")
    hot = next(f for f in results.findings if f.kind == K.HOT and f.partition == "hot")
    failures = failed(document)
    assert set(failures) == {"partition 'hot' level", "HOT"}
    assert failures["partition 'hot' level"].get("message") == hot.message
    assert failures["partition 'hot' level"].get("type") == "HOT" and hot.message in failures["partition 'hot' level"].text
    assert {"partition 'cold' level", "account level", *FAIL_ON} <= set(cases(document))
    assert suite.get("failures") == str(len(failures)) == "2" and suite.get("errors") == "0"
    assert suite.get("tests") == str(len(cases(document)))
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["fail_on"] == "hot" and properties["exit_code"] == "3" and properties["run_id"] == "r1"


def test_without_fail_on_nothing_fails_and_the_findings_are_in_the_suites_output():
    document = rendered(troubled())
    (suite,) = document.iter("testsuite")
    assert failed(document) == {} and suite.get("failures") == "0" and suite.get("errors") == "0"
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["exit_code"] == "0"
    output = suite.find("system-out").text
    assert "HOT partition 'hot'" in output and "THROTTLED partition 'hot'" in output and "ERRORS partition 'cold'" in output


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(FAIL_ON)))
def test_each_case_fails_exactly_where_the_exit_codes_checks_fail(fail_on):
    results = troubled()
    kinds = tuple(sorted(fail_on))
    code, _ = exit_code(results, checks_for(kinds))
    document = rendered(results, kinds)
    failures = failed(document)
    for kind in FAIL_ON:
        said = FindingCheck(kind).fails(results) if kind in fail_on else None
        assert (kind in failures) == (said is not None), kind
    for partition in results.hottest(10):
        level = results.headline(partition).finding
        scoped = [f for f in results.findings if f.partition == partition]
        fails = level in fail_on and FindingCheck(K(level)).fails(replace(results, findings=scoped))
        assert (f"partition {partition!r} level" in failures) == bool(fails), partition
    assert ("account level" in failures) == (K.WARM in fail_on)  # the account is WARM
    assert (code == 3) == bool(failures) and code in (0, 3)
    assert int(next(document.iter("testsuite")).get("failures")) == len(failures)


def test_the_runs_own_failures_are_errors_whatever_fail_on_says():
    results = judged({"hot": 10})
    results.findings.append(Finding(kind=K.INCOMPLETE, partition=None, op_class=None, message="the report failed", remedy=""))
    assert K.INCOMPLETE in RUN_FAILURES
    document = rendered(results)
    (suite,) = document.iter("testsuite")
    errors = failed(document, "error")
    assert list(errors) == ["INCOMPLETE"] and errors["INCOMPLETE"].get("message") == "the report failed"
    assert suite.get("errors") == "1" and suite.get("failures") == "0"
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["exit_code"] == str(exit_code(results, [])[0]) == "1"


def test_hostile_keys_and_messages_are_text_and_secrets_are_redacted():
    results = judged({HOSTILE_KEY: 100}, partition_target=50)
    logged = f"from the logs: \x01\x1b[31mred\x1b[0m \ud800 \uffff; connection {CONNECTION}"
    results.findings += [
        Finding(kind=K.ERRORS, partition=HOSTILE_KEY, op_class=None, message=logged, remedy=""),
        Finding(
            kind=K.OUTAGE,
            partition=HOSTILE_KEY,
            op_class=None,
            message=f"</failure>]]><x a='https://acct/t?sv=1&sig={SECRET}'>",
            remedy="",
        ),
    ]
    data = junit.to_bytes([junit.suite(results, (K.HOT, K.ERRORS))])
    document = valid(data)
    assert SECRET.encode() not in data and b"<script>" not in data and b"]]><x" not in data
    name = f"partition {HOSTILE_KEY!r} level"
    failures = failed(document)
    assert name in failures and repr(HOSTILE_KEY) in failures[name].get("message")  # as findings name it
    errors = failures["ERRORS"].text
    assert "\\x01\\x1b[31mred" in errors and "\\ud800 \\uffff" in errors and "AccountKey=***" in errors
    output = next(document.iter("system-out")).text
    assert "</failure>]]><x a='https://acct/t?sv=1&sig=***'>" in output  # a kind --fail-on does not name: output, as text


def test_many_partitions_give_the_hottest_a_case_each_and_count_the_rest(monkeypatch):
    monkeypatch.setattr(junit, "MAX_PARTITION_CASES", 2)
    results = judged({"a": 100, "b": 90, "c": 10, "d": 5}, partition_target=50)
    document = rendered(results, ("hot",))
    levels = [name for name in cases(document) if name.startswith("partition ")]
    assert levels == ["partition 'a' level", "partition 'b' level"]
    (suite,) = document.iter("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["partitions"] == "4" and properties["partitions_left_out"] == "2"
    assert "2 of 4 partitions have no level case of their own" in suite.find("system-out").text


def test_a_file_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path, caplog):
    (tmp_path / "file").write_text("")
    with caplog.at_level(logging.ERROR, logger="loadtest"):
        assert not junit.write(tmp_path / "file" / "junit.xml", [junit.suite(troubled(), ())])
    assert len(caplog.records) == 1 and "the JUnit file could not be written" in caplog.text
    assert junit.write(tmp_path / "new" / "junit.xml", [junit.suite(troubled(), ())])
    valid((tmp_path / "new" / "junit.xml").read_bytes())
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["junit.xml"]


def test_compare_writes_a_suite_per_strategys_run_judged_by_the_fail_on_it_ran_with(tmp_path):
    ran = tmp_path / "single"
    ran.mkdir()
    results = judged({"hot": 100}, partition_target=50, settings={"fail_on": "hot"})
    (ran / RESULTS_FILE).write_text(results.to_json())
    outcomes = [
        StrategyOutcome(strategy="single", run_dir=str(ran), exit_code=3),
        StrategyOutcome(strategy="guid", run_dir=str(tmp_path / "guid"), exit_code=1),
    ]
    document = valid(junit.to_bytes([_suite(outcome, i) for i, outcome in enumerate(outcomes)]))
    single, guid = document.iter("testsuite")
    assert (single.get("name"), single.get("id"), single.get("failures")) == ("partition-stress single", "0", "2")
    assert {case.get("classname") for case in single.iter("testcase")} >= {"partition-stress.single.levels"}
    assert (guid.get("name"), guid.get("errors")) == ("partition-stress guid", "1")
    assert "the guid run (exit 1) left no results.json" in guid.find("testcase/error").get("message")


# --- the commands ------------------------------------------------------------------------------------------------


def test_simulate_writes_the_file_beside_its_exit_code(monkeypatch, tmp_path):
    target = tmp_path / "ci" / "junit.xml"  # its folder made as it is written
    code, stdout, stderr = in_process(
        monkeypatch, "simulate", "--arrival-rate", "3000", "-t", "2s", "--seed-entities", "10", "--fail-on", "hot",
        "--junit", str(target), "--out", str(tmp_path / "out"), "--no-report",
    )  # fmt: skip
    assert code == 3, stdout + stderr
    assert f"JUnit: {target}" in stdout
    document = valid(target.read_bytes())
    assert "partition 'hot' level" in failed(document)
    results = json.loads((tmp_path / "out" / RESULTS_FILE).read_text())
    assert {p.get("name"): p.get("value") for p in document.iter("property")}["run_id"] == results["run"]["id"]


def _diagnostic_log(path: Path) -> None:
    """Four seconds of point reads on 'hot', one in four answered 503 ServerBusy, in the diagnostic settings' form."""
    lines = []
    for t in range(4):
        for i in range(40):
            busy = i % 4 == 0
            lines.append(json.dumps({
                "time": f"2026-11-24T13:04:0{t}.{i:02d}00000Z", "operationName": "QueryEntity",
                "statusCode": 503 if busy else 200, "statusText": "ServerBusy" if busy else "Success", "durationMs": 3,
                "uri": f"http://h/acct/orders(PartitionKey='hot',RowKey='r{i}')", "correlationId": f"c{t}-{i}",
                "properties": {"clientRequestId": f"id-{t}-{i}", "responseBodySize": 900},
                "identity": {"metricResponseType": "ServerBusyError" if busy else "Success"},
            }))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


def test_traffic_writes_the_file_with_the_kinds_fail_on_names_failed(monkeypatch, tmp_path):
    log, target = tmp_path / "requests.json", tmp_path / "junit.xml"
    _diagnostic_log(log)
    code, stdout, stderr = in_process(
        monkeypatch, "traffic", str(log), "--partition-target", "10", "--fail-on", "throttled", "--junit", str(target),
        "--out", str(tmp_path / "out"), "--no-report",
    )  # fmt: skip
    assert code == 3, stdout + stderr
    document = valid(target.read_bytes())
    assert set(failed(document)) == {"THROTTLED"}  # HOT too, but --fail-on does not name it
    assert "HOT partition 'hot'" in next(document.iter("system-out")).text


@pytest.mark.parametrize("command", ["simulate", "merge", "traffic", "compare", "run"])
def test_a_junit_path_that_cannot_be_written_is_refused_in_one_line_before_anything_starts(monkeypatch, tmp_path, command):
    (tmp_path / "file").write_text("")
    given = {
        "simulate": ["--arrival-rate", "100"],
        "merge": [str(tmp_path)],
        "traffic": [str(tmp_path / "requests.json")],
        "compare": ["--strategies", "single,guid"],
        "run": [],
    }[command]
    for bad, said in (
        (tmp_path, "a folder; give a file to write"),
        (tmp_path / "file" / "j.xml", "cannot be created"),
        (tmp_path / "a\0b.xml", "not a file name this system can write"),
    ):
        code, _, stderr = in_process(monkeypatch, command, *given, "--junit", str(bad), "--out", str(tmp_path / "out"))
        assert code == 2 and stderr.count("\n") == 1, stderr
        assert f"loadtest: error: --junit {str(bad)!r}: " in stderr and said in stderr, stderr
        assert not (tmp_path / "out").exists()
