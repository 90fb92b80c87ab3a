"""``--junit FILE``: a judged run as JUnit XML, the verdict where CI looks (Azure Pipelines, GitHub Actions, Jenkins).

One ``<testsuite>`` per judged results (``loadtest compare``: one per strategy's run), of Ant's JUnit form (the strict
one: ``<properties>``, test cases, ``<system-out>``, ``<system-err>``, each suite's required attributes):

- a case per partition's level (the hottest ``MAX_PARTITION_CASES``; how many were left out is said) and the account's;
- a case per finding kind ``--fail-on`` takes (``finding_kinds.FAIL_ON``), whether it occurred or not;
- a case with an ``<error>`` per run failure that occurred (``finding_kinds.RUN_FAILURES``: exit 1 whatever
  ``--fail-on`` says).

A case fails exactly where the exit code's own check does (``findings.assess.FindingCheck.fails``, on the whole
results for a kind's case, on one partition's findings or the account's for a level's), so the file and the exit
code never disagree. Findings that fail nothing are in the suite's ``<system-out>`` (Ant's form has no output per
case). Every text is redacted (``redact``) and made XML 1.0 (control characters from logs shown as ``\\xNN``);
ElementTree escapes the markup.
"""

from __future__ import annotations

import logging
import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from ..counting.buckets import named
from ..findings.assess import FindingCheck, checks_for, exit_code
from ..outputs import write_whole
from ..redact import redact
from ..results.finding_kinds import FAIL_ON, RUN_FAILURES
from ..results.finding_names import FindingKind
from ..results.form import Finding, Results

__all__ = ["MAX_LISTED", "MAX_PARTITION_CASES", "PACKAGE", "missing_suite", "suite", "to_bytes", "write"]

log = logging.getLogger("loadtest")

#: The package (and classnames' prefix) of every suite; ``compare`` adds the strategy to it.
PACKAGE = "partition-stress"
#: Partitions given a level case of their own, hottest first: a run over production's logs names 10,000.
MAX_PARTITION_CASES = 100
#: Findings one failure text or the suite's output lists; the rest are counted (results.json keeps every one).
MAX_LISTED = 200
LEVELS = (FindingKind.HOT, FindingKind.WARM, FindingKind.COOL)

#: What XML 1.0 forbids: C0 controls but tab, newline and carriage return; surrogates; U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(text: object) -> str:
    """Any text bound for the file: without secrets, and characters XML 1.0 cannot hold shown as escapes."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", redact(str(text)))


def _token(text: object) -> str:
    """A name (xs:token in Ant's form): one line, single spaces, never empty."""
    return " ".join(_text(text).split()) or "-"


def _timestamp(started: str) -> str:
    """The run's start as Ant's form takes it: UTC, to the second, no zone (``2026-11-24T21:24:16``)."""
    try:
        when = datetime.fromisoformat(started)
    except ValueError:
        when = datetime.now(UTC)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def _listed(findings: Sequence[Finding], *, kinds: bool = False) -> list[str]:
    """Findings as lines (what each is on, its message; ``kinds``: its kind first), at most ``MAX_LISTED`` and the
    rest counted."""
    lines = [f"{f'{f.kind} ' if kinds else ''}{_with_what(f)}" for f in findings[:MAX_LISTED]]
    if len(findings) > MAX_LISTED:
        lines.append(f"... and {len(findings) - MAX_LISTED:,} more in results.json")
    return lines


def _with_what(finding: Finding) -> str:
    """A finding's message, with what it is on first unless it begins with it (``partition 'hot' …``)."""
    on = _on(finding)
    return finding.message if finding.message.startswith(on) else f"{on}: {finding.message}"


def _on(finding: Finding) -> str:
    """What a finding is on: a partition, the account (its level) or the run."""
    if finding.partition is not None:
        where = f"partition {named(finding.partition)}"
    else:
        where = "the account" if finding.kind in LEVELS else "the run"
    return f"{where} ({finding.op_class})" if finding.op_class else where


class _Suite:
    """One ``<testsuite>`` as it is filled: its cases, counted as they are added."""

    def __init__(self, *, name: str, index: int, package: str, started: str, seconds: float) -> None:
        self.element = ET.Element("testsuite")
        attributes = {
            "name": _token(name),
            "tests": "0",
            "failures": "0",
            "errors": "0",
            "skipped": "0",
            "time": f"{max(0.0, seconds):.3f}",
            "timestamp": _timestamp(started),
            "hostname": _token(socket.gethostname() or "localhost"),
            "id": str(index),
            "package": _token(package),
        }
        self.element.attrib.update(attributes)
        self.properties = ET.SubElement(self.element, "properties")
        self.package = _token(package)
        self.out: list[str] = []

    def add_property(self, name: str, value: object) -> None:
        ET.SubElement(self.properties, "property", name=name, value=_text(value))

    def case(self, name: str, group: str, *, failure: tuple[str, str, str] | None = None, error: bool = False) -> None:
        """A case; ``failure``: (type, message, text), an ``<error>`` instead with ``error``."""
        case = ET.SubElement(self.element, "testcase", name=_token(name), classname=f"{self.package}.{group}", time="0")
        self.element.set("tests", str(int(self.element.get("tests", "0")) + 1))
        if failure is not None:
            kind, message, text = failure
            tag = "error" if error else "failure"
            ET.SubElement(case, tag, message=_text(message), type=kind).text = _text(text)
            counter = "errors" if error else "failures"
            self.element.set(counter, str(int(self.element.get(counter, "0")) + 1))

    def close(self) -> ET.Element:
        ET.SubElement(self.element, "system-out").text = _text("\n".join(self.out)) if self.out else ""
        ET.SubElement(self.element, "system-err").text = ""
        return self.element


def _named(checks: dict[FindingKind, FindingCheck], level: str) -> FindingCheck | None:
    """The check ``--fail-on`` has for a row's level (HOT, WARM, COOL; "" where none was set), if any."""
    return checks.get(FindingKind(level)) if level in LEVELS else None


def _level_failure(check: FindingCheck | None, results: Results, findings: list[Finding]) -> tuple[str, str, str] | None:
    """A level's failure: where ``--fail-on`` names the level and its check fails on these findings (one partition's,
    or the account's), the first one's message; the text lists each with its remedy."""
    if check is None or check.fails(replace(results, findings=findings)) is None:
        return None
    hits = [f for f in findings if f.kind == check.kind]
    text = "\n".join(f"{f.message}\nRemedy: {f.remedy}" if f.remedy else f.message for f in hits)
    return check.kind, hits[0].message, text


def suite(
    results: Results, fail_on: Iterable[FindingKind], *, index: int = 0, name: str = "", package: str = PACKAGE
) -> ET.Element:
    """One judged run (``findings.assess.assess`` has filled its findings) as a ``<testsuite>``, failed where
    ``fail_on`` (``--fail-on``'s kinds) names what it found."""
    checks = {check.kind: check for check in checks_for(tuple(fail_on))}
    code, messages = exit_code(results, list(checks.values()))
    run = results.run
    built = _Suite(
        name=name or f"partition-stress {run.id}", index=index, package=package, started=run.started, seconds=run.duration_s
    )
    fail_words = ",".join(kind.lower() for kind in checks) or "never"
    for key, value in (
        ("run_id", run.id),
        ("target_kind", run.target_kind),
        ("partition_target", run.partition_target),
        ("account_target", run.account_target),
        ("simulated", str(run.simulated).lower()),
        ("fail_on", fail_words),
        ("exit_code", code),
    ):
        built.add_property(key, value)

    # (a) the levels: the account's, then each partition's, hottest first
    by_partition: dict[str | None, list[Finding]] = {}
    for found in results.findings:
        by_partition.setdefault(found.partition, []).append(found)
    account = results.account.finding
    accounts = [f for f in by_partition.get(None, []) if f.op_class is None and f.kind in LEVELS]
    failure = _level_failure(_named(checks, account), results, accounts)
    built.case("account level", "levels", failure=failure)
    peaks = results.peaks()
    listed = results.hottest(MAX_PARTITION_CASES)
    for partition in listed:
        level = results.headline(partition).finding
        failure = _level_failure(_named(checks, level), results, by_partition.get(partition, []))
        built.case(f"partition {named(partition)} level", "levels", failure=failure)
    left_out = len(peaks) - len(listed)
    built.add_property("partitions", len(peaks))
    built.add_property("partitions_left_out", left_out)

    # (b) each kind --fail-on takes: failed where it names the kind and the kind's check fails
    for kind in FAIL_ON:
        check = checks.get(kind)
        if check is None or check.fails(results) is None:
            built.case(kind, "findings")
            continue
        hits = [f for f in results.findings if f.kind == kind]
        built.case(kind, "findings", failure=(kind, hits[0].message, "\n".join(_listed(hits))))

    # (c) the run's own failures: errors, whatever --fail-on says
    for kind in RUN_FAILURES:
        hits = [f for f in results.findings if f.kind == kind]
        if hits:
            built.case(kind, "run", failure=(kind, hits[0].message, "\n".join(_listed(hits))), error=True)

    built.out.append(f"partition-stress run {run.id} ({run.target_kind}), --fail-on {fail_words}: exit {code}")
    built.out += [f"FAILED {message}" for message in messages]
    if left_out:
        built.out.append(
            f"{left_out:,} of {len(peaks):,} partitions have no level case of their own (the {len(listed)} hottest do; "
            "results.json holds every one)"
        )
    failing = {kind for kind, check in checks.items() if check.fails(results) is not None} | set(RUN_FAILURES)
    others = [f for f in results.findings if f.kind not in failing]
    if others:
        built.out.append("Findings that fail nothing here (--fail-on does not name their kind):")
        built.out += [f"  {line}" for line in _listed(others, kinds=True)]
    return built.close()


def missing_suite(name: str, reason: str, *, index: int = 0, package: str = PACKAGE) -> ET.Element:
    """A run that left no results to judge (``compare``: a strategy's run that failed): one case, in error."""
    built = _Suite(name=name, index=index, package=package, started=datetime.now(UTC).isoformat(), seconds=0.0)
    built.case("results", "run", failure=("NO_RESULTS", reason, reason), error=True)
    return built.close()


def plain_suite(name: str, cases: Sequence[tuple[str, str, tuple[str, str, str] | None]], out: Sequence[str]) -> ET.Element:
    """A suite of a command's own checks (``advise``: a design fits, each verified design agrees): each case a
    (name, group, failure or None)."""
    built = _Suite(name=name, index=0, package=PACKAGE, started=datetime.now(UTC).isoformat(), seconds=0.0)
    for case, group, failure in cases:
        built.case(case, group, failure=failure)
    built.out += list(out)
    return built.close()


def to_bytes(suites: Sequence[ET.Element]) -> bytes:
    """The file's bytes: ``<testsuites>`` holding ``suites``, UTF-8 with its declaration, indented."""
    root = ET.Element("testsuites")
    root.extend(suites)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write(path: str | Path, suites: Sequence[ET.Element]) -> bool:
    """Write the file whole or not at all; False, with one line on the console, if it cannot be: the results are
    written by then, and their exit code stands."""
    try:
        data = to_bytes(suites)
        write_whole(Path(path).expanduser(), lambda file: file.write(data))
    except OSError as err:
        log.error("the JUnit file could not be written to %s: %s", path, err.strerror or err)
        return False
    return True
