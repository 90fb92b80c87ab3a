"""What the tests share: the tool run as a user runs it (a child process) or in this process, its outputs, and
data several test files use. Fixtures are in conftest."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
from azure.data.tables import EdmType, EntityProperty

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.outputs import SERIES_FILE
from loadtest.results import series_frame
from loadtest.results.form import RunInfo

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
#: A short run: seconds, users, spawn rate, seeded rows.
SHORT = ("-t", "1s", "-u", "3", "-r", "3", "--seed-entities", "200")
#: A short run of every built-in operation (with a --key-strategy and a --client: ``every_operation_run``).
EVERY_OPERATION = (
    *("-t", "2s", "-u", "3", "-r", "3", "--seed-entities", "120", "--skew", "zipfian", "--select", "n"),
    "--mix",
    "read=10,scan=5,filter-scan=5,partition-scan=5,table-scan=2,insert=10,upsert=10,replace=5,update=5,"
    "update-etag=5,delete=5,batch=10",
    *("--batch-size", "8", "--batch-mix", "insert=30,upsert=30,update=20,delete=20", "--scan-size", "20"),
)
#: (key strategy, client) of the every-operation runs: each kind of strategy, each client.
EVERY_OPERATION_RUNS = [("hash-prefix:4", "fast"), ("guid", "fast"), ("template:{event:3}__{day:2}", "sdk")]


def results_of(out: Path) -> dict:
    """A run's results.json, with its per-second series read from series.parquet beside it into ``timeseries``'s rows
    (as results.json held them before that file)."""
    return {**json.loads((out / "results.json").read_text()), "timeseries": series_of(out)}


def readable(name: str, data: bytes) -> str:
    """A file's content as text, to search for what must not be in it: a Parquet file's values decoded (its bytes are
    compressed: a secret in it would not show), any other file's text."""
    if name.endswith(".parquet"):
        return pq.read_table(io.BytesIO(data)).to_pandas().to_csv()
    return data.decode("utf-8")


def file_text(path: Path) -> str:
    return readable(path.name, path.read_bytes())


def series_of(out: Path) -> list[dict]:
    """The rows of the series.parquet a run wrote in ``out``."""
    return series_frame.records(series_frame.read(out / SERIES_FILE))


def tables(target) -> set[str]:
    return {t.name for t in target.service().list_tables()}


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_loadtest(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Finished:
    """``python -m loadtest ARGS`` in a child process, as a user would run it (bounded in time): started warm
    (``warm.py``: forked from a process that has the imports done), or cold when the test sets variables of its own
    (``env``: some are read at import, e.g. ``SSL_CERT_FILE`` by the contexts a library makes then)."""
    child_env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
    child_env.update(env or {})
    if not env:
        return warm_start("loadtest", list(args), env=child_env, timeout=timeout)
    done = subprocess.run(
        [sys.executable, "-m", "loadtest", *args],
        cwd=ROOT,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Finished(done.returncode, done.stdout, done.stderr)


class _Warm:
    """The two warm servers (with and without gevent's patches), started on first use, stopped by PID at the end."""

    servers: dict[bool, subprocess.Popen] = {}

    @classmethod
    def server(cls, patched: bool) -> subprocess.Popen:
        running = cls.servers.get(patched)
        if running is None or running.poll() is not None:
            with (ARTIFACTS / f"warm-server{'-patched' if patched else ''}.log").open("w") as log:  # the server keeps its own
                running = subprocess.Popen(
                    [sys.executable, str(ROOT / "tests" / "warm.py"), *(["patched"] if patched else [])],
                    cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                )  # fmt: skip
            cls.servers[patched] = running
        return running

    @classmethod
    def stop(cls) -> None:
        for server in cls.servers.values():
            server.stdin.close()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)
        cls.servers.clear()


def stop_warm_servers() -> None:
    _Warm.stop()


def warm_start(module: str, args: list[str], *, env: dict[str, str], timeout: float) -> Finished:
    """``python -m MODULE ARGS`` forked from a warm server in ROOT with ``env``: its exit status and outputs, or
    ``subprocess.TimeoutExpired`` (the child killed) past ``timeout``."""
    from loadtest.command_line.entry import GEVENT_COMMANDS

    ARTIFACTS.mkdir(exist_ok=True)
    server = _Warm.server(module == "locust" or args[:1] in ([c] for c in GEVENT_COMMANDS))
    with tempfile.TemporaryDirectory() as outputs:
        out, err = Path(outputs, "stdout"), Path(outputs, "stderr")
        command = {"module": module, "args": args, "env": env, "cwd": str(ROOT), "stdout": str(out), "stderr": str(err)}
        server.stdin.write(json.dumps({**command, "timeout": timeout}) + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        if answer.get("timeout"):
            raise subprocess.TimeoutExpired([module, *args], timeout, out.read_text(), err.read_text())
        return Finished(answer["code"], out.read_text(), err.read_text())


class LoadWatch:
    """A child's output streams read in threads, each one's lines kept; ``started`` set at Locust's "Ramping to" line
    (the load has begun: a fault timed from the command could fall in a busy machine's set-up)."""

    def __init__(self, *streams) -> None:
        self.started = threading.Event()
        self.lines: list[list[str]] = [[] for _ in streams]
        pairs = zip(streams, self.lines, strict=True)
        self.readers = [threading.Thread(target=self._read, args=pair, daemon=True) for pair in pairs]
        for reader in self.readers:
            reader.start()

    def _read(self, stream, kept: list[str]) -> None:
        for line in stream:
            kept.append(line)
            if "Ramping to" in line:
                self.started.set()

    def wait_started(self, timeout: float = 60) -> None:
        assert self.started.wait(timeout=timeout), "".join(line for kept in self.lines for line in kept)

    def join(self) -> None:
        for reader in self.readers:
            reader.join(timeout=10)

    def text(self, stream: int = 0) -> str:
        return "".join(self.lines[stream])


def run_with_azurite_frozen(
    azurite: EmbeddedAzurite, args: list[str], *, at: float, thaw_after: float | None = None, times: dict | None = None
) -> Finished:
    """``python -m loadtest ARGS`` while ``azurite`` is frozen (SIGSTOP) ``at`` seconds into the load (from Locust's
    "Ramping to" line: a busy machine can take seconds to set up, and a freeze timed from the command could fall in
    the set-up), thawed ``thaw_after`` seconds later (else once the run ended): it keeps accepting connections and
    answers none. Thawed, and the child killed, whatever happens. ``times`` gets when it was frozen and thawed (epoch
    seconds)."""
    times = {} if times is None else times
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watch = LoadWatch(child.stdout, child.stderr)
    try:
        watch.wait_started()
        time.sleep(at)
        azurite.process.send_signal(signal.SIGSTOP)
        times["frozen"] = time.time()
        if thaw_after is not None:
            time.sleep(thaw_after)
            azurite.process.send_signal(signal.SIGCONT)
            times["thawed"] = time.time()
        child.wait(timeout=90)
        watch.join()
    finally:
        azurite.process.send_signal(signal.SIGCONT)
        if child.poll() is None:
            child.kill()
    return Finished(child.returncode, watch.text(0), watch.text(1))


def locust_headless(
    locustfile: Path, azurite: EmbeddedAzurite, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``locust -f locustfile --headless ARGS`` in a child process against ``azurite`` (bounded in time), started
    warm."""
    args = ["-f", str(locustfile), "--headless", *args]
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
    done = warm_start("locust", args, env=env, timeout=timeout)
    return subprocess.CompletedProcess(["locust", *args], done.code, done.stdout, done.stderr)


def run_locustfile(locustfile: Path, tmp_path: Path, azurite: EmbeddedAzurite, *args: str) -> tuple[dict, list[dict]]:
    """``locust -f locustfile --headless ARGS`` against the fixture's Azurite: results.json and Locust's own stats."""
    stats = tmp_path / "stats"
    done = locust_headless(locustfile, azurite, "--out", str(tmp_path / "out"), "--json-file", str(stats), *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return results_of(tmp_path / "out"), json.loads(stats.with_suffix(".json").read_text())


@contextmanager
def web_ui_process(args: list[str], *, port: int, env: dict[str, str], log: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """``python ARGS`` serving a web UI on ``port``: (the child, its URL) once ``/`` answers; then stopped by PID with
    SIGTERM (Locust's own path: report, cleanup), killed if it has not exited within 60 s."""
    with log.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert child.poll() is None and time.monotonic() < deadline, log.read_text()
            try:
                urllib.request.urlopen(url + "/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        yield child, url
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)


def run_info(**overrides):
    values = dict(
        id="r1",
        started="2026-01-01T00:00:00+00:00",
        duration_s=20,
        target_kind="azurite-embedded",
        table="t",
        seeded=10,
        partition_target=2000,
        account_target=20000,
        profile="current",
    )
    values.update(overrides)
    return RunInfo(**values)


class Hooks:
    def __init__(self) -> None:
        self.answers: list[tuple[int, str | None]] = []
        self.waits: list[float] = []

    def on_attempt(self, status: int, error_code: str | None, message: str = "") -> None:
        self.answers.append((status, error_code))

    def on_backoff(self, seconds: float) -> None:
        self.waits.append(seconds)


def typed(pk: str, rk: str) -> dict:
    """One property of every type the service stores."""
    return {
        "PartitionKey": pk,
        "RowKey": rk,
        "text": "naïve 'quoted' \u2603",
        "int32": -(2**31),
        "int64": EntityProperty(2**40 + 7, EdmType.INT64),
        "double": 2.5,
        "whole_double": EntityProperty(3.0, EdmType.DOUBLE),
        "flag": True,
        "when": datetime(2026, 11, 22, 11, 36, 1, 123456, tzinfo=UTC),
        "guid": uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833"),
        "blob": bytes(range(256)),
    }


KEY = "c2VjcmV0LWtleS1mb3ItdGVzdHM="  # base64, and not Azurite's
SAS = "sv=2020-08-04&ss=t&srt=sco&sp=rwdlacu&se=2099-01-01&sig=c2lnbmF0dXJl"

REFUSED = [
    (f"AccountKey={KEY}", "names no table endpoint"),  # no AccountName
    (";;;;=", "part 5 is not one of its settings"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=notaurl", "TableEndpoint 'notaurl': must be an http(s) URL"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=http://[::1/x", "must be an http(s) URL"),  # an invalid IPv6 URL
    (f"UseDevelopmentStorage=true;AccountKey={KEY}", "UseDevelopmentStorage=true stands alone"),
    (f"AccountName=acct;AccountKey={KEY}", "names no table endpoint"),  # once aimed at a public host it did not name
    (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={KEY}", "names no table endpoint"),  # likewise
    (f"BlobEndpoint=https://acct.blob.core.windows.net;AccountName=acct;AccountKey={KEY}", "names no table endpoint"),
    (";", "names no table endpoint"),
    ("garbage", "part 1 is not one of its settings"),
    (f"{KEY};AccountName=a;TableEndpoint=http://x/a", "part 1 is not one of its settings"),
    ("AccountName=a;AccountKey=not base64!;TableEndpoint=http://x/a", "AccountKey must be base64"),
    ("AccountName=a;TableEndpoint=http://x/a", "one credential"),
    (f"TableEndpoint=http://x/a;AccountKey={KEY}", "one credential"),  # a key needs its account's name
    (f"AccountName=a;AccountKey={KEY};SharedAccessSignature={SAS};TableEndpoint=http://x/a", "one credential"),
    ("TableEndpoint=https://a.table.core.windows.net;SharedAccessSignature=sv=1", "must hold sig="),
    (f"AccountName=a;accountname=b;AccountKey={KEY};TableEndpoint=http://x/a", "AccountName is given twice"),
    (f"AccountName=;AccountKey={KEY};TableEndpoint=http://x/a", "AccountName is empty"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=http://x:99999/a", "must be an http(s) URL"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=ftp://x/a", "must be an http(s) URL"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=https://x/a?{SAS}", "no query"),
    (f"AccountName=a;AccountKey={KEY};EndpointSuffix=evil.example/x@", "must be a host name"),
    (f"AccountName=a b;AccountKey={KEY};EndpointSuffix=core.windows.net", "AccountName 'a b' must be letters"),
    (f"DefaultEndpointsProtocol=ftp;AccountName=a;AccountKey={KEY};EndpointSuffix=core.windows.net", "http or https"),
    (f"Foo=bar;AccountName=a;AccountKey={KEY};EndpointSuffix=core.windows.net", "'Foo' is not one of its settings"),
]


WORKLOAD = ("--mix", "insert=50,batch=50", "--batch-mix", "insert=100", "--batch-size", "10", "--seed-entities", "200")


class Launched(Exception):
    """Validation passed: Locust would start here (``locust.main.main``, the launch point, replaced)."""


def in_process(monkeypatch, *args: str, env: dict[str, str] | None = None) -> tuple[int | str, str, str]:
    """``loadtest ARGS`` in this process, as ``loadtest.command_line.dispatch.main``, stopping where Locust would start:
    (exit code or "launched", stdout, stderr). ``monkeypatch`` restores Locust, ``sys.argv`` and the environment."""
    import locust.main

    from loadtest.account.connection_string import CONNECTION_STRING_ENV, FROM_FLAG_ENV
    from loadtest.command_line.dispatch import main

    def launch() -> None:
        raise Launched

    monkeypatch.setattr(locust.main, "main", launch)
    monkeypatch.setattr(sys, "argv", list(sys.argv))  # cli.run hands Locust its argv there
    for name in (CONNECTION_STRING_ENV, FROM_FLAG_ENV, *(env or {})):  # set, so that teardown restores them
        monkeypatch.setenv(name, "")
        os.environ.pop(name, None)
    os.environ.update(env or {})
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
        try:
            code: int | str = main(list(args))
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except Launched:
            code = "launched"
    return code, stdout.getvalue(), stderr.getvalue()


def docs_example(page: str, name: str) -> str:
    """The Python example marked ``<!-- example: NAME -->`` on a docs page (``how-to/own-locustfile.md``), verbatim."""
    text = (ROOT / "docs" / page).read_text()
    marker = f"<!-- example: {name} -->\n```python\n"
    assert text.count(marker) == 1, f"docs/{page}: no single example {name!r}"
    return text.split(marker, 1)[1].split("```", 1)[0]


def without_imports(*packages: str) -> str:
    """Python source that, run first in a child process, makes importing any of ``packages`` (or a module under one)
    fail with ``blocked: NAME``: what a command must not load, proved by running it without."""
    return f"""
import importlib.abc, sys

class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == p or name.startswith(p + ".") for p in {packages!r}):
            raise ImportError(f"blocked: {{name}}")
        return None

sys.meta_path.insert(0, _Block())
"""
