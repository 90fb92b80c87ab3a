"""``loadtest run`` end to end: Locust's real runner against a real Azurite, run as a user runs it."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from helpers import ROOT, SHORT, in_process, results_of, series_of, tables

from loadtest.command_line.dispatch import _locust_argv, _parser
from loadtest.exit_codes import error_line
from loadtest.redact import AZURITE_KEY
from loadtest.service.entities import EntityShape
from loadtest.testbed.table import TestTable
from loadtest.workload.key_specs import key_strategy

#: An account target no machine's closed loop reaches (entities/s): the account's verdict stays COOL, whatever its speed.
ACCOUNT_OUT_OF_REACH = "100000000"


@pytest.mark.parametrize(
    ("client", "partition_target", "kind", "code"), [("fast", "1", "HOT", 3), ("sdk", "100000000", "COOL", 0)]
)
def test_put_entities_equal_the_entities_written_and_the_verdict_follows_the_target(
    loadtest, azurite, target, tmp_path, client, partition_target, kind, code
):
    """Inserts and batches create new rows: the table grows by exactly the PUT entities the run reports, with either
    client. The same workload is HOT under a tiny target (and fails --fail-on hot), COOL under a huge one. The account's
    target is given too, far above what any machine sends: a closed loop's pace is the machine's, and at the profile's
    20,000/s the account reached 75 % on a 2-core machine and WARM on a faster one."""
    done = loadtest(
        "run",
        *SHORT,
        "--client",
        client,
        "--mix",
        "read=40,insert=30,batch=30",
        "--batch-mix",
        "insert=100",
        "--batch-size",
        "20",
        "--partition-target",
        partition_target,
        "--account-target",
        ACCOUNT_OUT_OF_REACH,
        "--fail-on",
        "hot",
        "--keep-table",
        "--out",
        str(tmp_path),
        "--no-report",
        "--connection-string",
        azurite.connection_string,
    )
    assert done.code == code, done.output
    assert "Target: the connection string given with --connection-string" in done.stderr
    data = results_of(tmp_path)
    assert data["run"]["settings"]["client"] == client
    put = [row for row in data["partitions"] if row["op_class"] == "PUT"]
    get = [row for row in data["partitions"] if row["op_class"] == "GET"]
    assert len(put) == len(get) == 1 and put[0]["entities"] > 0 and get[0]["entities"] > 0
    table = TestTable(target=target, name=data["run"]["table"], created=True)
    try:
        assert data["run"]["seeded"] == 200
        assert table.count("hot") - 200 == put[0]["entities"] == sum(row["rows"] for row in series_of(tmp_path))
        assert data["account"]["entities"] == put[0]["entities"] + get[0]["entities"]
        assert data["attempts"] >= put[0]["requests"] + get[0]["requests"]
    finally:
        table.drop()
    # the verdict on the partition only: the checklist is advice, and a closed loop may peg the generator (GENERATOR_BOUND)
    assert data["account"]["finding"] == "COOL" and data["account"]["target"] == int(ACCOUNT_OUT_OF_REACH)
    assert {f["kind"] for f in data["findings"] if f["kind"] in ("HOT", "WARM", "COOL")} == {kind}
    assert {(r["op_class"], r["finding"]) for r in data["partitions"]} >= {("GET", kind), ("PUT", kind)}
    assert ("FAILED --fail-on hot" in done.stdout) == (code == 3)


def test_results_count_what_locusts_final_stats_and_its_csv_count(measured_run):
    """results.json counts every request event Locust's own stats count: per request name and op class, the same as
    Locust's --json-file (its stats when the process ends) and its --csv (the session's run, given both). Locust writes
    the CSV once a second and not at its exit (2.47): the operations that ended after its last tick, one per user as the
    users stop, were missing there (measured: 27,904 GET in results.json, 27,898 in the CSV; 27,358 and 27,353 again
    with the --json-file at 27,358); the run now lets it write once more when every operation is in."""
    stats = measured_run / "locust"
    results = results_of(measured_run)
    final = {entry["name"]: entry["num_requests"] for entry in json.loads(stats.with_suffix(".json").read_text())}
    assert {n["name"]: n["requests"] for n in results["workload"]["names"]} == final and sum(final.values()) > 0
    for op_class in ("GET", "PUT"):
        counted = sum(r["requests"] for r in results["partitions"] if r["op_class"] == op_class)
        assert counted == sum(n for name, n in final.items() if name.startswith(op_class + " ")), op_class
    with open(f"{stats}_stats.csv", newline="") as rows:
        written = {row["Name"]: int(row["Request Count"]) for row in csv.DictReader(rows)}
    with open(f"{stats}_stats_history.csv", newline="") as rows:
        last_tick = [row for row in csv.DictReader(rows) if row["Name"] == "Aggregated"][-1]
    assert written.pop("Aggregated") == int(last_tick["Total Request Count"]) == sum(written.values())
    assert written == final


def test_the_test_table_is_dropped_after_the_run(measured_run, target):
    assert results_of(measured_run)["run"]["table"] not in tables(target)


def test_default_embedded_run_reports_get_and_put_and_keeps_secrets_out(loadtest, tmp_path):
    """The suite's proof of the embedded path end to end (no connection settings: the tool's own Azurite, started,
    measured and stopped); other runs use the session's Azurite."""
    done = loadtest("run", "-t", "2s", "-u", "4", "-r", "4", "--rate", "25", "--out", str(tmp_path))
    assert done.code == 0, done.output
    assert f"Report: {tmp_path / 'report.html'}" in done.stdout
    assert "Target: an embedded Azurite" in done.stderr
    data = results_of(tmp_path)
    assert data["run"]["target_kind"] == "azurite-embedded"
    eps = {r["op_class"]: r["mean_eps"] for r in data["partitions"] if r["partition"] == "hot"}
    assert eps["GET"] > 0 and eps["PUT"] > 0
    for name in ("results.json", "report.html", "timeseries.csv"):
        assert AZURITE_KEY not in (tmp_path / name).read_text()
    assert AZURITE_KEY not in done.output
    pid = int(re.search(r"Azurite table service on \S+ \(pid (\d+)\)", done.output).group(1))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_ctrl_c_stops_the_embedded_azurite_and_keeps_what_ran(tmp_path):
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "loadtest", "run", "-t", "60s", "-u", "2", "-r", "2", "--rate", "25"]
            + ["--out", str(tmp_path / "out")],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60
        while "All users spawned" not in log.read_text() and time.monotonic() < deadline:
            assert child.poll() is None, log.read_text()
            time.sleep(0.2)
        pid = int(re.search(r"\(pid (\d+)\)", log.read_text()).group(1))
        os.kill(pid, 0)
        time.sleep(2)
        child.send_signal(signal.SIGINT)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert "Traceback" not in log.read_text()
    assert "MonkeyPatchWarning" not in log.read_text()  # the entry patched gevent before anything imported ssl
    assert "Got SIGINT signal" in log.read_text() and "SIGTERM" not in log.read_text()  # the signal as received
    assert results_of(tmp_path / "out")["partitions"], "the interrupted run's results were lost"
    # and its report says it was cut short, by what, and what was planned (before: only its few seconds)
    run = results_of(tmp_path / "out")["run"]
    assert run["interrupted"] == "SIGINT" and run["planned_s"] == 60 and run["duration_s"] < 60
    report = (tmp_path / "out" / "report.html").read_text()
    assert re.search(r"Cut short</b>: stopped by SIGINT after [0-9.]+ s\s+of the 60.0 s planned", report), report[:3000]
    assert "cut short by SIGINT after" in report


BAD_INPUTS = [
    (["--partition-key", "a/b"], "may not contain / \\ # ? or control characters"),
    (["--partition-key", "a\tb"], "may not contain"),
    (["--partition-key", "k" * 513], "at most 1 KiB"),
    (["--entity-size", str(2 * 1024 * 1024)], "1 MiB"),
    (["--properties", "300"], "--properties 300: at most"),
    (["--entity-size", "100000", "--properties", "1"], "at most 32768"),
    (["--mix", "read=1,explode=2"], "valid operations: read, scan, filter-scan, partition-scan, table-scan, insert"),
    (["--mix", "read=0,upsert=0"], "at least one operation needs a weight above 0"),
    (["--batch-size", "101"], "from 1 to 100"),
    (["--entity-size", "65536", "--batch-size", "100"], "exceeds the 4 MiB"),
    (["-t", "0"], "must be a positive time span"),
    (["--duration=-5s"], "must be a positive time span"),
    (["-u", "0"], "--users 0: must be from 1 to 10000"),
    (["-u", "-3"], "--users -3: must be from 1 to 10000"),
    (["-r", "0"], "--spawn-rate '0': must be users per second from 0.001 to 10000"),
    (["--entity-size", "0"], "--entity-size 0: must be from 1"),
    (["--mix", "read=60,read=40"], "--mix 'read=60,read=40': 'read' is given twice"),
    (["--select", "a b,c"], "--select 'a b,c': 'a b' is not a property name"),
    (["--key-strategy", "template:{a:0}"], "--key-strategy 'template:{a:0}': each field takes N of at least 1"),
    (["--skew", "hotspot:200,10"], "--skew 'hotspot:200,10': hotspot:OPS,KEYS takes percentages: OPS from 0 to 100"),
    (["--web", "--web-port", "99999"], "--web-port 99999: must be from 1 to 65535"),
    (["--seed-entities", "0"], "--seed-entities 0: must be from 1 to 1000000"),
    (["--scan-size", "-1"], "--scan-size -1: must be from 1 to 100000"),
    (["--fail-on", "lukewarm"], "valid: never, hot"),
    (["--profile", "turbo"], "valid profiles: current, legacy"),
    (["--reuse-table"], "needs --table NAME"),
]


@pytest.mark.parametrize("args,rule", BAD_INPUTS, ids=[" ".join(a)[:40] for a, _ in BAD_INPUTS])
def test_bad_input_is_one_line_exit_2_and_nothing_sent(monkeypatch, azurite, target, args, rule):
    """In this process, up to where Locust would start (as a user runs it, a child process: faults/test_input.py)."""
    before = tables(target)
    code, stdout, stderr = in_process(
        monkeypatch, "run", *args, env={"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    )
    assert code == 2, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert rule in lines[0]
    assert "Traceback" not in stderr + stdout and AZURITE_KEY not in stderr + stdout
    assert tables(target) == before


def test_an_option_neither_the_tool_nor_locust_knows_is_one_line_exit_2_and_nothing_sent(loadtest, azurite, target):
    """Refused by Locust's own parser, in a child process as a user runs it (the tool's own refusals as a user runs
    them: ``faults/test_input.py``)."""
    before = tables(target)
    done = loadtest("run", "--no-such-option", env={"AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string})
    rule = "unrecognized arguments: --no-such-option"
    assert done.code == 2, done.output
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and rule in lines[0], done.stderr
    assert "Traceback" not in done.output and AZURITE_KEY not in done.output
    assert tables(target) == before


def test_unreachable_endpoint_exits_1_with_one_line(loadtest, azurite):
    from loadtest.account.azurite import azurite_connection_string
    from loadtest.child_process import free_port

    dead = azurite_connection_string(free_port())  # a loopback port nobody listens on
    done = loadtest("run", *SHORT, "--connection-string", dead)
    assert done.code == 1, done.output
    assert "loadtest: error: cannot reach http://127.0.0.1:" in done.stderr
    assert "Traceback" not in done.output and AZURITE_KEY not in done.output


def test_wrong_account_key_exits_1_and_never_shows_the_key(loadtest, azurite):
    wrong_key = "V3Jvbmc" + "A" * 81 + "=="
    wrong = azurite.connection_string.replace(AZURITE_KEY, wrong_key)
    done = loadtest("run", *SHORT, env={"AZURE_STORAGE_CONNECTION_STRING": wrong})
    assert done.code == 1, done.output
    assert "refused the credentials (403" in done.stderr
    assert "Target: the connection string from $AZURE_STORAGE_CONNECTION_STRING" in done.stderr
    assert wrong_key not in done.output and "Traceback" not in done.output


def test_no_node_for_the_embedded_default_says_how_to_get_it(loadtest):
    done = loadtest("run", *SHORT, env={"PATH": "/nonexistent"})
    assert done.code == 1, done.output
    assert "needs Node.js 18+ and npm" in done.stderr and "--connection-string" in done.stderr
    assert "Traceback" not in done.output


def test_an_existing_table_is_never_written_without_reuse(loadtest, azurite, table):
    table.seed(key_strategy("single"), 10, EntityShape.for_size(1024), progress=False)
    done = loadtest("run", *SHORT, "--table", table.name, "--connection-string", azurite.connection_string)
    assert done.code == 1 and "pass --reuse-table" in done.stderr, done.output
    assert table.count() == 10


def test_report_re_renders_from_results_without_re_running(loadtest, measured_run, tmp_path, monkeypatch):
    out = tmp_path / "run"
    shutil.copytree(measured_run, out)
    (out / "report.html").unlink()
    again = loadtest("report", str(out))
    assert again.code == 0, again.output
    assert "partitions-table" in (out / "report.html").read_text()
    code, _, stderr = in_process(monkeypatch, "report", str(tmp_path / "nowhere"))
    assert code == 2 and "no results.json there" in stderr


@pytest.mark.parametrize("command", [[], ["run"], ["ceiling"], ["simulate"], ["compare"], ["merge"], ["emulator"], ["report"]])
def test_help_of_every_subcommand_prints_and_exits_0(monkeypatch, command):
    code, stdout, stderr = in_process(monkeypatch, *command, "--help")
    assert code == 0, stderr
    assert "usage: loadtest" in stdout and "Traceback" not in stdout + stderr
    if command == ["run"]:
        assert "80 % of operations" in stdout  # a % in help text once crashed argparse's formatting


def test_help_as_a_user_runs_it(loadtest):
    done = loadtest("run", "--help")
    assert done.code == 0 and "usage: loadtest run" in done.stdout, done.output


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["run", "--duraton", "10s"], "--duration"),
        (["compare", "--strategies", "single,guid", "--sed-entities", "9"], "--seed-entities"),
    ],
)
def test_a_misspelt_option_gets_the_tools_own_did_you_mean(monkeypatch, args, meant):
    code, stdout, stderr = in_process(monkeypatch, *args)
    assert code == 2, stderr
    (line,) = [line for line in stderr.splitlines() if line.strip()]
    assert f"{args[-2]}: no such option of loadtest {args[0]}; did you mean {meant}?" in line
    assert "Traceback" not in stderr + stdout


def test_workers_get_a_master_of_their_own_on_loopback_at_a_free_port_unless_the_user_placed_it(monkeypatch, tmp_path):
    """Two runs with --workers on one machine met at Locust's 5557 (the second failed to bind, a traceback), and the
    master listened on every interface. The address the user gives, as a flag, a variable or in locust.conf, stands."""
    for name in [name for name in os.environ if name.startswith("LOCUST_MASTER")]:
        monkeypatch.delenv(name)
    ns = _parser().parse_args(["run", "--workers", "2"])
    first = _locust_argv(ns, [])
    port = first[first.index("--master-bind-port") + 1]
    assert first[first.index("--master-bind-host") + 1] == "127.0.0.1"
    assert first[first.index("--master-port") + 1] == port and 1024 < int(port) < 65536
    given = _locust_argv(ns, ["--master-bind-port", "6000"])
    assert given.count("--master-bind-port") == 1 and "--master-bind-host" not in given
    monkeypatch.setenv("LOCUST_MASTER_BIND_PORT", "6001")
    assert "--master-bind-port" not in _locust_argv(ns, [])
    monkeypatch.delenv("LOCUST_MASTER_BIND_PORT")
    monkeypatch.setenv("LOCUST_MASTER_NODE_PORT", "6001")  # --master-port's variable, as Locust names it
    assert "--master-bind-port" not in _locust_argv(ns, [])
    monkeypatch.delenv("LOCUST_MASTER_NODE_PORT")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "locust.conf").write_text("master-bind-port = 6002\n")  # Locust's config file
    assert "--master-bind-port" not in _locust_argv(ns, [])
    assert "--master-bind-port" not in _locust_argv(_parser().parse_args(["run"]), [])


def test_option_values_beginning_with_a_dash_reach_locust_as_values(monkeypatch, tmp_path):
    """``--partition-key=-hot``, ``--out=-x`` are handed to Locust one argument each: as two, Locust's parser took the
    value for a flag and refused the run in its multi-line usage error, after --out had been made."""
    from locust.argument_parser import parse_options

    import loadtest.plugin  # noqa: F401  (the tool's options on Locust's parser)
    from loadtest.options.settings import Settings

    monkeypatch.chdir(tmp_path)
    code, _, stderr = in_process(monkeypatch, "run", "--partition-key=-hot", "--out=-x", "--table=", "--skip-verify")
    assert code == "launched", stderr
    settings = Settings.from_options(parse_options(sys.argv[1:]))  # what Locust's parser makes of what it was handed
    assert (settings.partition_key, settings.out, settings.skip_verify) == ("-hot", "-x", True)
    assert "--partition-key=-hot" in sys.argv and "--skip-verify" in sys.argv


def test_an_error_line_stays_one_line_whatever_it_quotes():
    """A name read from input with a line break in it (a file's, a key's) is shown, not obeyed: one line each."""
    assert error_line("--traffic 'a\nb.json': no such file\r") == "loadtest: error: --traffic 'a\\nb.json': no such file\\r"
