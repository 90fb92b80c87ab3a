"""The command's entry: gevent patched first for the commands that run Locust, and only for them: ``report``,
``merge`` and ``simulate`` run with Locust and gevent blocked from import, ``emulator`` without Locust and without
gevent's monkey-patching (its relay uses gevent's sockets as they are)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from helpers import ROOT, without_imports
from test_results import engine_results

from loadtest.child_process import free_port

RUN_ENTRY = """
from loadtest.command_line.entry import main

sys.argv = ["loadtest", *sys.argv[1:]]
sys.exit(main())
"""

#: Each command given (a JSON list of argument lists) through the entry in turn, in one process: ``EXIT [name, code]``.
EACH_ENTRY = """
import json
from loadtest.command_line.entry import main

for args in json.loads(sys.argv[1]):
    sys.argv = ["loadtest", *args]
    try:
        code = main()
    except SystemExit as stop:
        code = stop.code
    print("EXIT " + json.dumps([args[0], code or 0]), flush=True)
"""


def test_report_merge_simulate_and_traffic_run_with_locust_and_gevent_blocked_from_import(tmp_path):
    """They once loaded Locust (a duration parser, the metrics' listener, the request profile's type) and with it
    gevent's patches: ``merge`` and ``simulate`` now read plain counts, and ``traffic`` never did. The four commands in
    one child with both blocked (a blocked import fails in whichever command first asks for it): one interpreter's
    start and imports, not four."""
    for name in ("a", "b"):
        engine_results(name).write(tmp_path / name)
    log = tmp_path / "requests.json"
    log.write_text(
        '{"time":"2026-11-24T13:04:05.25Z","operationName":"QueryEntity","statusCode":503,"statusText":"ServerBusy",'
        '"uri":"http://127.0.0.1:1/a/t(PartitionKey=\'k\',RowKey=\'r\')","properties":{"clientRequestId":"c-1"}}\n'
    )
    commands = [
        ["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "merged")],
        ["report", str(tmp_path / "merged")],
        ["simulate", "--arrival-rate", "50", "-t", "5s", "--out", str(tmp_path / "s")],
        ["traffic", str(log), "--out", str(tmp_path / "t")],
    ]
    done = subprocess.run(
        [sys.executable, "-c", without_imports("locust", "gevent") + EACH_ENTRY, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    codes = [json.loads(line.split(" ", 1)[1]) for line in done.stdout.splitlines() if line.startswith("EXIT ")]
    assert codes == [[args[0], 0] for args in commands], done.stdout + done.stderr
    assert "blocked" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "merged" / "report.html").is_file() and (tmp_path / "t" / "report.html").is_file()


def test_the_emulator_serves_without_locust_or_monkey_patching(tmp_path):
    """A request relayed to an upstream that is not there: its connection closed, as a dead service's would be;
    served on gevent's own sockets with ``gevent.monkey`` blocked from import."""
    port, dead = free_port(), free_port()
    child = subprocess.Popen(
        [sys.executable, "-c", without_imports("locust", "gevent.monkey") + RUN_ENTRY, "emulator"]
        + ["--upstream", f"http://127.0.0.1:{dead}"]
        + ["--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert f"emulator: http://127.0.0.1:{port}" in child.stdout.readline()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(b"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            assert client.recv(1024) == b""  # closed: the upstream could not be reached
        assert child.poll() is None  # still serving
    finally:
        child.terminate()
        _, stderr = child.communicate(timeout=30)
    assert "blocked" not in stderr and "Traceback" not in stderr, stderr


def test_the_tools_processes_use_the_system_allocator_for_arrow_unless_the_user_chose_one(tmp_path):
    """Arrow reads ARROW_DEFAULT_MEMORY_POOL when first imported: a command's process (and what it starts) gets the
    system's, which gives memory back; a user's own choice stands."""
    code = (
        "import contextlib\nfrom loadtest.command_line.entry import main\nwith contextlib.suppress(SystemExit):\n    main()\n"
        "import pyarrow as pa\nprint(pa.default_memory_pool().backend_name)"
    )
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    for given, expected in ((None, "system"), ("jemalloc", "jemalloc")):
        run_env = env if given is None else {**env, "ARROW_DEFAULT_MEMORY_POOL": given}
        done = subprocess.run(
            [sys.executable, "-c", code, "cleanup", "--help"],
            cwd=tmp_path,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.stdout.strip().splitlines()[-1] == expected, (done.stdout, done.stderr)
