"""The documentation site (docs/, mkdocs.yml) and the README: the site builds offline with warnings as errors, its
reference pages are what their declarations make, every Python example on it runs and every ``loadtest`` command on
it passes the tool's own parser and rules (validated, not run: nothing is created or sent)."""

from __future__ import annotations

import atexit
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import ROOT, docs_example, in_process

sys.path.insert(0, str(ROOT / "docs"))
import gen_reference  # noqa: E402

from loadtest import exit_codes  # noqa: E402
from loadtest.command_line import dispatch as cli
from loadtest.command_line.locust_args import locust_flags  # noqa: E402
from loadtest.options.commands import COMMANDS, COMPARE_OPTIONS  # noqa: E402
from loadtest.options.option import Option  # noqa: E402
from loadtest.options.settings import Settings, namespace  # noqa: E402
from loadtest.results.finding_kinds import KINDS  # noqa: E402
from loadtest.results.finding_names import FindingKind  # noqa: E402
from loadtest.running.user_classes import is_table_user, settings_per_class  # noqa: E402

DOCS = ROOT / "docs"
#: Every page a user reads: the site's, the README, and deploy/README.md (the site includes it).
PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md", ROOT / "deploy" / "README.md"]


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


# --- the reference pages come from the declarations ---------------------------------------------------------------


def test_the_reference_pages_are_what_their_declarations_make():
    drifted = [_name(path) for path, text in gen_reference.pages().items() if path.read_text() != text]
    assert not drifted, f"{drifted}: differ from their declarations; run .venv/bin/python docs/gen_reference.py"


def _drifted() -> list[str]:
    return sorted(path.name for path, text in gen_reference.pages().items() if path.read_text() != text)


def test_a_declaration_changed_without_its_page_is_drift(monkeypatch):
    """Each generated block reads its declaration: a kind's meaning, a new option, a new exit code each change it."""
    assert _drifted() == []
    with monkeypatch.context() as patch:
        patch.setitem(KINDS, FindingKind.HOT, replace(KINDS[FindingKind.HOT], means="something else"))
        assert _drifted() == ["findings.md"]
    with monkeypatch.context() as patch:
        added = Option(("--brand-new",), "an option nobody documented", 7, commands=frozenset({"run"}))
        patch.setitem(COMMANDS, "run", (*COMMANDS["run"], ("new", (added,))))
        assert _drifted() == ["options.md"]
    with monkeypatch.context() as patch:
        patch.setattr(exit_codes, "EXIT_NEW", 4, raising=False)
        assert _drifted() == ["exit-codes.md"]


def test_the_options_reference_names_every_flag_of_every_command():
    page = (DOCS / "reference" / "options.md").read_text()
    commands = cli._parser()._subparsers._group_actions[0].choices  # noqa: SLF001
    for name, sub in commands.items():
        assert f"### loadtest {name}\n" in page, name
        for action in sub._actions:  # noqa: SLF001
            for flag in action.option_strings:
                assert flag in ("-h", "--help") or f"`{flag}`" in page, (name, flag)


def test_the_exit_codes_page_explains_each_declared_code_and_no_other():
    page = (DOCS / "reference" / "exit-codes.md").read_text()
    declared = {value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    explained = {int(code) for code in re.findall(r"^- \*\*(\d)\*\* ", page, re.MULTILINE)}
    assert explained == declared


# --- the site builds ---------------------------------------------------------------------------------------------


def test_the_site_builds_offline_with_warnings_as_errors(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    options_page = (site / "reference" / "options" / "index.html").read_text()
    assert "--partition-key" in options_page and "LOCUST_PARTITION_TARGET" in options_page
    assert "Recipe 1" in (site / "how-to" / "azure-load-testing" / "index.html").read_text()  # deploy/README.md included
    for page in site.rglob("*.html"):  # nothing fetched when a page opens: no font, stylesheet or script from the web
        text = page.read_text()
        assert not re.search(r"<(link|script)[^>]+(href|src)=\"(https?:)?//", text), page
        assert "fonts.googleapis" not in text, page


# --- the README ----------------------------------------------------------------------------------------------------


def test_the_readme_is_the_pitch_the_two_commands_a_tour_and_links():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "bash scripts/run.sh " in readme and "bash scripts/test.sh " in readme  # .ci/run calls the test command
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text() or "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
    links = re.findall(r"\]\(((?!https?:)[^)#]+)", readme)
    assert len(links) >= 20, links
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_every_flag_the_pages_name_is_an_option_of_the_tool_or_of_locust():
    """A flag renamed or removed leaves no sentence behind (flags of other tools: the few the pages use)."""
    commands = cli._parser()._subparsers._group_actions[0].choices  # noqa: SLF001
    known = {flag for sub in commands.values() for action in sub._actions for flag in action.option_strings}  # noqa: SLF001
    known |= locust_flags()
    others = {"--build", "--scale", "--no-deps", "--ops", "--sides", "--strict", "--check", "--analytics-query", "--records"}
    others.add("--workspace")  # az monitor log-analytics query's
    others.update({"--hours", "--seconds", "--days", "--keys"})  # the benches' own
    others.add("--duraton")  # what happens when a flag is misspelt
    for page in PAGES[:-1]:  # deploy/README.md names az's and helm's flags
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9](?![\w*-])", page.read_text()))
        assert named - known - others == set(), _name(page)


# --- every Python example runs -------------------------------------------------------------------------------------


def _python_examples() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for n, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL)):
            found.append((f"{_name(page)}#{n}", block))
    return found


@pytest.mark.parametrize(("where", "source"), _python_examples(), ids=[w for w, _ in _python_examples()])
def test_every_python_example_runs_and_its_user_classes_pass_the_runs_rules(where, source):
    scope: dict = {"__name__": "docs_example"}
    exec(compile(source, where, "exec"), scope)
    classes = [v for v in scope.values() if isinstance(v, type) and v.__module__ == "docs_example" and is_table_user(v)]
    assert classes or "import" in source, where
    for settings in settings_per_class(Settings.from_options(namespace()), classes):
        assert settings.key_strategy


def test_an_example_whose_class_the_rules_refuse_fails_the_check():
    source = docs_example("how-to/own-locustfile.md", "OrdersUser").replace('"read": 80', '"reed": 80')
    with pytest.raises(exit_codes.UsageError, match="OrdersUser.mix"):
        test_every_python_example_runs_and_its_user_classes_pass_the_runs_rules("misspelt", source)


def test_the_examples_are_found():
    """The collection above sees the examples the pages have (a changed fence would leave them untested)."""
    wheres = [where for where, _ in _python_examples()]
    assert len(wheres) >= 4 and any(w.startswith("README.md") for w in wheres), wheres


# --- every command passes the tool's own rules ---------------------------------------------------------------------

#: What a page writes for a value of your own, and what the check puts in its place.
PLACEHOLDERS = {
    "<account>": "myaccount",
    "<run-id>": "run-1",
    "$RUN": "run-1",
    "AccountName=…;AccountKey=…": "AccountName=myaccount;AccountKey=bXlrZXk=",
}


def _commands() -> list[tuple[str, str]]:
    """Every ``loadtest`` or ``bash scripts/run.sh`` command: each line of a shell block (continuations joined), and
    each inline one with arguments, unless it names a form (``loadtest merge SOURCE…``, ``--run-id ID``) or is a
    generated block's (the options' help, which the parser itself holds)."""
    found: list[tuple[str, str]] = []
    for page in PAGES:
        text = re.sub(r"<!-- generated: (\S+) -->.*?<!-- end: \1 -->", "", page.read_text(), flags=re.DOTALL)
        for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
            exported: dict[str, str] = {}  # what the block exports holds for its later commands, until unset
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                line = line.strip()
                words = shlex.split(line, comments=True) if line else []
                if words[:1] == ["export"]:
                    exported.update(word.split("=", 1) for word in words[1:])
                if words[:1] == ["unset"]:
                    exported = {name: value for name, value in exported.items() if name not in words}
                while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
                    words = words[1:]
                if words[:1] == ["loadtest"] or words[:2] == ["bash", "scripts/run.sh"]:
                    env = "".join(shlex.quote(f"{name}={value}") + " " for name, value in exported.items())
                    found.append((_name(page), env + line))
        for span in re.findall(r"`((?:loadtest [^`\s]+|bash scripts/run\.sh) [^`]+)`", text):
            if "…" not in span and not re.search(r"\b[A-Z]{2,}\b", span):
                found.append((_name(page), span.replace("\n", " ")))
    return found


@functools.cache
def _profile_folder(name: str) -> Path:
    """A folder holding a small traffic profile named ``name``: two partitions' reads and writes for a minute."""
    from loadtest.traffic.profile_counts import ProfileCounts

    counts = ProfileCounts()
    for second in range(60):
        counts.add(1_795_500_000 + second, "QueryEntity", "GET", "orders-17", 5, 5)
        counts.add(1_795_500_000 + second, "InsertOrMergeEntity", "PUT", "orders-18", 2, 2)
    folder = Path(tempfile.mkdtemp(prefix="docs-profile-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    counts.write(folder / name, first=1_795_500_000, last=1_795_500_059, hashed=False, records=0, entity_bytes=1000)
    return folder


def _check_command(monkeypatch, line: str) -> None:
    """The command through the tool's own edge, stopped before anything is sent."""
    for placeholder, value in PLACEHOLDERS.items():
        line = line.replace(placeholder, value)
    words = shlex.split(line, comments=True)
    env = {}
    while re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    args = ["run", *words[2:]] if words[:2] == ["bash", "scripts/run.sh"] else words[1:]
    command = args[0] if args else ""
    if command == "run" and "--traffic" in args:  # the profile it names, beside it (a run reads it as it starts)
        monkeypatch.chdir(_profile_folder(args[args.index("--traffic") + 1]))
    if command in ("run", "ceiling"):
        monkeypatch.setattr(cli, "_check_web", lambda host, port: None)  # the machine's port 8089, not the docs'
        code, _, err = in_process(monkeypatch, *args, env=env)
        assert code == "launched", err
        return
    parser = cli._parser()  # noqa: SLF001
    ns, extra = parser.parse_known_args(args)
    if command == "compare":
        given = {opt.dest: opt.value(ns) for opt in COMPARE_OPTIONS}
        for strategy in given["strategies"].split(","):
            each = "simulate" if given["simulate"] else "run"
            given_env = [f"{name}={value}" for name, value in env.items()]
            _check_command(monkeypatch, shlex.join([*given_env, "loadtest", each, *extra, "--key-strategy", strategy]))
        return
    if command == "simulate":
        from loadtest.simulator.simulate_command import DURATION, SIMULATE_OPTIONS, _check_size, _settings

        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = _settings(ns, extra)
        _check_size(settings, DURATION.value(ns), SIMULATE_OPTIONS[0].value(ns))
        return
    assert not extra, extra
    sub = parser._subparsers._group_actions[0].choices[command]  # noqa: SLF001
    declared = gen_reference._declared()  # noqa: SLF001
    for action in sub._actions:  # noqa: SLF001
        if action.dest != "help":
            gen_reference._option_of(action, declared).value(ns, environment=False)  # noqa: SLF001


@pytest.mark.parametrize(("where", "line"), _commands(), ids=[f"{w}: {c[:60]}" for w, c in _commands()])
def test_every_command_on_the_pages_passes_the_tools_own_rules(monkeypatch, where, line):
    _check_command(monkeypatch, line)


def test_the_commands_are_found():
    lines = [line for _, line in _commands()]
    for command in ("run", "ceiling", "simulate", "compare", "merge", "cleanup", "report", "emulator"):
        assert any(re.search(rf"loadtest {command}\b", line) for line in lines), command


def test_a_command_the_rules_refuse_fails_the_check(monkeypatch):
    """The check can fail: a bad value in a documented form is caught, whichever command carries it."""
    for bad in (
        "loadtest run --mix reed=80",
        "loadtest ceiling --ceiling-start 0",
        "loadtest simulate --arrival-rate 0",
        "loadtest compare --strategies single,nonsense -t 2m",
        "loadtest merge --from-container runs --run-id peak-1 --fail-on lukewarm",
        "bash scripts/run.sh --users 0",
    ):
        with pytest.raises((AssertionError, exit_codes.UsageError, SystemExit)):
            _check_command(monkeypatch, bad)
