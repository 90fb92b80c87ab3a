"""Bad input (issue 10, item 5): one line naming the flag, the rule and the valid values, exit 2, raised before
anything is sent, no table created, never a traceback. A fuzz over every option, then each reported case."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import KEY as OWN_KEY
from helpers import REFUSED, ROOT, SAS, in_process, tables
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadtest.account.connection_string import CONNECTION_STRING_ENV
from loadtest.options.stress import OPTIONS
from loadtest.redact import AZURITE_KEY
from loadtest.service.operations import BATCH_OPERATIONS, MIX_OPERATIONS

KEY = AZURITE_KEY
SECRETS = {KEY, OWN_KEY, SAS, SAS.rpartition("sig=")[2]}  # never in a message
#: Every flag the fuzz feeds, with the names a refusal may give it (-u is refused as --users).
RUN_FLAGS = {"-u": ("-u", "--users"), "-r": ("-r", "--spawn-rate"), "-t": ("-t", "--duration"), "--workers": ("--workers",)}
FLAGS = {**{opt.flags[0]: opt.flags for opt in OPTIONS}, **RUN_FLAGS, "--web-port": ("--web-port",)}
SWITCHES = {opt.flags[0] for opt in OPTIONS if opt.is_switch}


@pytest.fixture
def run_in_process(monkeypatch, tmp_path):
    """``loadtest run ARGS`` in this process, stopping where Locust would start: (exit code, stderr)."""
    monkeypatch.chdir(tmp_path)  # --out values are folders made here

    def run(*args: str, env: dict[str, str] | None = None) -> tuple[int | str, str]:
        code, _, stderr = in_process(monkeypatch, "run", *args, env=env)
        return code, stderr

    return run


def assert_refused(code: int | str, stderr: str, flags: tuple[str, ...]) -> str:
    """Exit 2 and exactly one line, ``loadtest: error:``, naming one of ``flags``; returns the line."""
    lines = stderr.splitlines()
    assert code == 2, (code, stderr)
    assert len(lines) == 1 and lines[0].startswith("loadtest: error: "), stderr
    assert any(flag in lines[0] for flag in flags), (flags, lines[0])
    assert "Traceback" not in stderr and KEY not in stderr
    return lines[0]


# --- the fuzz ------------------------------------------------------------------------------------

# What a command line can carry: any text but NUL, and bytes that are not UTF-8 (argv decodes them to lone surrogates).
ARGV_TEXT = st.one_of(
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=30),
    st.binary(max_size=30).map(lambda raw: raw.replace(b"\x00", b"").decode("utf-8", "surrogateescape")),
)
NUMBERS = st.one_of(
    st.integers(-(10**25), 10**25).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " ", "0", "-1", "1e309", "nan", "0x10", "1_000", "١٢", "9" * 5000, "\udcff", "65536"]),
)


SPECIAL = ["", "0", "1", "-1", "-0", "2.5", "100", "200", "inf", "-inf", "nan", "1e309", "1e300", "99999999999", "x", " "]
TOKENS = st.one_of(st.sampled_from(SPECIAL), st.sampled_from(SPECIAL), NUMBERS)


def _form(names: list[str], params: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """NAME or NAME:PARAMS, with the option's own names (and a few wrong ones)."""
    name = st.one_of(st.sampled_from(names), st.sampled_from(names), st.sampled_from(["", "x", names[0].upper()]))
    return st.tuples(name, st.one_of(st.just(None), params, params)).map(
        lambda np: np[0] if np[1] is None else f"{np[0]}:{np[1]}"
    )


def _listed(items: st.SearchStrategy[str], sep: str = ",", size: int | None = None) -> st.SearchStrategy[str]:
    return st.lists(items, min_size=size or 0, max_size=size or 5).map(sep.join)


def _mix(names: tuple[str, ...]) -> st.SearchStrategy[str]:
    return _listed(st.tuples(st.sampled_from([*names, "", "x", "READ"]), TOKENS).map("=".join))


FIELD = st.tuples(st.sampled_from(["a", "b", "1", "é", ""]), st.sampled_from(["", ":0", ":1", ":3", ":99999999", ":x", ":"]))
TEMPLATE = _listed(
    st.one_of(FIELD.map(lambda f: "{" + "".join(f) + "}"), st.sampled_from(["__", "/", "{", "}", "x", "%", "#"])), ""
)
TIME_FORMAT = _listed(st.sampled_from(["yyyy", "MM", "dd", "HH", "mm", "ss", "%", "/", "-", "x" * 300, "\udcff", "\t"]), "")
SETTING = st.sampled_from(["AccountName", "AccountKey", "TableEndpoint", "EndpointSuffix", "SharedAccessSignature",
                           "UseDevelopmentStorage", "DefaultEndpointsProtocol", "accountname", "Nope", ""])  # fmt: skip
SETTING_VALUE = st.sampled_from(["", "a", KEY, "core.windows.net", "http://127.0.0.1:1/a", "http://[::1/x", "notaurl",
                                 "true", "sv=1&sig=x", "https", "ftp", "evil.com/x@", "=="])  # fmt: skip
URL = st.tuples(
    st.sampled_from(["http://", "https://", "ftp://", ""]),
    st.sampled_from(["a", "[::1", "[::1]", "a:99999", "a:0", ""]),
    st.sampled_from(["", "/", "/x?sig=1", "#f", " x"]),
).map("".join)

#: Beside random text, values shaped like each option's valid ones, so the fuzz reaches its deeper rules.
SHAPED: dict[str, st.SearchStrategy[str]] = {
    "--key-strategy": st.one_of(
        _form(["single", "set", "hash-prefix", "guid", "append-only"], TOKENS),
        _form(["template"], TEMPLATE),
        _form(["timestamp"], TIME_FORMAT),
    ),
    "--row-key-strategy": st.one_of(_form(["sequential", "guid", "prepend-only"], TOKENS), _form(["timestamp"], TIME_FORMAT)),
    "--skew": st.one_of(_form(["hotspot"], _listed(TOKENS, size=2)), _form(["uniform", "zipfian", "hotspot"], _listed(TOKENS))),
    "--retry": st.one_of(
        _form(["fixed"], _listed(TOKENS, size=2)), _form(["exponential"], _listed(TOKENS, size=4)), _form(["none"], TOKENS)
    ),
    "--mix": _mix(MIX_OPERATIONS),
    "--batch-mix": _mix(BATCH_OPERATIONS),
    "--select": _listed(st.sampled_from(["n", "rowkey", "RowKey", "a b", "1a", "_x", "é", "x" * 256])),
    "--fail-on": _listed(st.sampled_from(["never", "hot", "HOT", "warm", "lukewarm", ""])),
    "--connection-string": _listed(st.tuples(SETTING, SETTING_VALUE).map("=".join), ";"),
    "--account-url": URL,
    "-t": st.tuples(
        st.one_of(st.sampled_from(["0", "90", "168", "169", "99999999999", "1.5", "-5", "١٢", ""]), NUMBERS),
        st.sampled_from(["", "s", "m", "h", "h30m", "d"]),
    ).map("".join),
    "--out": st.one_of(  # relative: folders land in tmp_path (a-file is a file there)
        ARGV_TEXT.map(lambda v: "out-" + v.replace("..", "__")), st.sampled_from(["a-file", "a-file/x", "/proc/partition-stress"])
    ),
}


def values(flag: str) -> st.SearchStrategy[str]:
    """Mostly shaped like the option's valid values (where it has a shape), else any text or number."""
    anything = st.one_of(ARGV_TEXT, NUMBERS)
    if flag == "--out":
        return SHAPED[flag]
    return st.one_of(SHAPED[flag], SHAPED[flag], SHAPED[flag], anything) if flag in SHAPED else anything


def fuzz(flag: str, names: tuple[str, ...], run_in_process, connection_string: str, seen: dict[str, int]) -> None:
    """Feed ``flag`` generated values: each is refused in one line naming it, or valid (Locust would start)."""

    @settings(
        max_examples=40 if flag in SHAPED else 15,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(value=values(flag))
    def check(value: str) -> None:
        args = [f"{flag}={value}"] if flag in SWITCHES else [flag, value]
        if flag not in ("--connection-string", "--account-url"):
            args += ["--connection-string", connection_string]
        code, stderr = run_in_process(*args)
        if code == "launched":
            assert "loadtest: error" not in stderr, stderr
        else:
            assert_refused(code, stderr, names)
        seen[str(code)] = seen.get(str(code), 0) + 1

    check()


def test_fuzz_every_option_is_refused_in_one_line_or_valid_and_no_table_is_created(run_in_process, azurite, target):
    before = tables(target)
    Path("a-file").write_text("not a folder")  # in tmp_path, for --out
    seen: dict[str, int] = {}
    for flag, names in FLAGS.items():
        fuzz(flag, names, run_in_process, azurite.connection_string, seen)
    assert seen["launched"] and seen["2"] > len(FLAGS), seen  # it reached both sides
    assert tables(target) == before


# --- each reported case ------------------------------------------------------------------------------

#: (arguments, the flag the line names, part of its rule or valid values): the values issue 10 reports.
REPORTED = [
    (["--key-strategy", "template:{a:0}"], "--key-strategy", "N of at least 1"),
    (["--key-strategy", "template:{a:99999999}"], "--key-strategy", "at most 100,000 keys"),
    (["--key-strategy", "template:{a}{"], "--key-strategy", "other braces are not allowed"),
    (["--key-strategy", "timestamp:yyyy/MM"], "--key-strategy", "may not contain"),
    (["--web", "--web-port", "99999"], "--web-port", "from 1 to 65535"),
    (["--web-port", "0"], "--web-port", "from 1 to 65535"),
    (["--row-key-strategy", "timestamp:"], "--row-key-strategy", "valid: sequential, guid"),
    (["--row-key-strategy", "guid:3"], "--row-key-strategy", "takes no parameter"),
    (["--skew", "zipfian:5"], "--skew", "between 0 and 1"),
    (["--arrivals", "bursty"], "--arrivals", "valid arrivals: constant, poisson"),
    (["--arrival-rate", "-5"], "--arrival-rate", "0 or more"),
    (["--rate", "2", "--arrival-rate", "100"], "--arrival-rate", "give one"),
    (["--skew", "hotspot:200,10"], "--skew", "OPS from 0 to 100"),
    (["--mix", "read=60,read=40"], "--mix", "'read' is given twice"),
    (["--batch-mix", "upsert=60,upsert=40"], "--batch-mix", "'upsert' is given twice"),
    (["--select", "a b,c"], "--select", "C# identifier"),
    (["--select", "rowkey"], "--select", "is the system property RowKey"),
    (["--select", "n,n"], "--select", "named twice"),
    (["--select", "x" * 256], "--select", "up to 255 characters"),
    (["--users", "99999999999999999999"], "--users", "from 1 to 10000"),
    (["-u", "10001"], "--users", "from 1 to 10000"),
    (["--spawn-rate", "1e300"], "--spawn-rate", "from 0.001 to 10000"),
    (["--spawn-rate", "0.0001"], "--spawn-rate", "from 0.001 to 10000"),
    (["--workers", "99999999"], "--workers", "from 0 to 64"),
    (["-t", "99999999999h"], "--duration", "at most 168h"),
    (["--timeout", "1e12"], "--timeout", "at most 3600"),
    (["--retry", "fixed:inf,1"], "--retry", "valid forms"),
    (["--partition-key", "a\udcffb"], "--partition-key", "not valid Unicode"),
    (["--properties", "300"], "--properties", "--properties 300: at most"),
    (["--account-url", "https://[::1/x"], "--account-url", "an http(s) URL"),
]


@pytest.mark.parametrize("args,flag,rule", REPORTED, ids=[" ".join(a)[:40] for a, _, _ in REPORTED])
def test_each_reported_value_is_refused_in_one_line_naming_its_flag(run_in_process, azurite, args, flag, rule):
    code, stderr = run_in_process(*args, "--connection-string", azurite.connection_string)
    line = assert_refused(code, stderr, (flag,))
    assert rule in line
    if flag == "--row-key-strategy":
        assert "--key-strategy" not in line.replace("--row-key-strategy", "")


@pytest.mark.parametrize("connection_string,rule", REFUSED)
def test_a_malformed_connection_string_is_one_line_without_the_secret(run_in_process, connection_string, rule):
    code, stderr = run_in_process("--connection-string", connection_string)
    line = assert_refused(code, stderr, ("--connection-string",))
    assert rule in line and not any(secret in line for secret in SECRETS)


def test_a_malformed_connection_string_from_the_environment_names_the_variable(run_in_process):
    code, stderr = run_in_process(env={CONNECTION_STRING_ENV: f"AccountName=acct;AccountKey={KEY}"})
    assert assert_refused(code, stderr, (f"${CONNECTION_STRING_ENV}",)).startswith(f"loadtest: error: ${CONNECTION_STRING_ENV}:")


def test_a_connection_string_on_the_command_line_works_with_one_warning(run_in_process, azurite):
    code, stderr = run_in_process("--connection-string", azurite.connection_string)
    assert code == "launched"
    (line,) = stderr.splitlines()
    assert line.startswith("loadtest: warning: --connection-string") and CONNECTION_STRING_ENV in line
    assert KEY not in stderr
    assert run_in_process(env={CONNECTION_STRING_ENV: azurite.connection_string}) == ("launched", "")


def test_a_web_port_in_use_is_refused_before_anything_starts(run_in_process, azurite, silent_port):
    code, stderr = run_in_process("--web", "--web-port", str(silent_port), "--connection-string", azurite.connection_string)
    assert f"127.0.0.1:{silent_port} cannot be bound" in assert_refused(code, stderr, ("--web-port",))
    code, stderr = run_in_process("--web", "--web-host", "203.0.113.7", "--connection-string", azurite.connection_string)
    assert "203.0.113.7:8089 cannot be bound" in assert_refused(code, stderr, ("--web-host",))


# --- as a user runs it: a child process, and Locust's own parser ------------------------------------------

CHILD_CASES = [
    (["--key-strategy", "template:{a:0}"], "--key-strategy"),
    (["--web", "--web-port", "99999"], "--web-port"),
    (["--row-key-strategy", "timestamp:"], "--row-key-strategy"),
    (["--mix", "read=60,read=40"], "--mix"),
    (["--users", "99999999999999999999"], "--users"),
]


def assert_one_error_line(code: int, stderr: str, flag: str) -> None:
    assert code == 2, stderr
    assert "Traceback" not in stderr and KEY not in stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("loadtest: error:")]
    assert flag in line, line


@pytest.mark.parametrize("args,flag", CHILD_CASES, ids=[" ".join(a)[:30] for a, _ in CHILD_CASES])
def test_as_a_user_runs_it_bad_input_is_one_line_exit_2_and_no_table(loadtest, azurite, target, args, flag):
    before = tables(target)
    done = loadtest("run", *args, "--connection-string", azurite.connection_string, timeout=60)
    assert_one_error_line(done.code, done.stderr, flag)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert tables(target) == before


def test_a_web_port_in_use_as_a_user_runs_it(loadtest, azurite, target, silent_port):
    done = loadtest("run", "--web", "--web-port", str(silent_port), "--connection-string", azurite.connection_string, timeout=60)
    assert_one_error_line(done.code, done.stderr, "--web-port")
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def run_locust(*args: str) -> subprocess.CompletedProcess:
    """``locust -f loadtest/locustfile.py --headless -t 2s ARGS`` as a user runs it, without the environment's target."""
    return subprocess.run(
        [sys.executable, "-m", "locust", "-f", "loadtest/locustfile.py", "--headless", "-t", "2s", *args],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != CONNECTION_STRING_ENV},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_locusts_own_parser_refuses_a_bad_template_in_one_line_and_creates_no_table(azurite, target):
    before = tables(target)
    done = run_locust("--key-strategy", "template:{a:0}", "--connection-string", azurite.connection_string)
    assert_one_error_line(done.returncode, done.stderr, "--key-strategy")
    assert tables(target) == before


def test_locust_f_with_a_connection_string_on_its_command_line_warns_once(azurite, tmp_path):
    target = ("--connection-string", azurite.connection_string)
    done = run_locust("-u", "1", "--seed-entities", "10", "--out", str(tmp_path), "--no-report", *target)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "visible to other local users" in line]
    assert len(warnings) == 1 and "WARNING" in warnings[0] and CONNECTION_STRING_ENV in warnings[0]
