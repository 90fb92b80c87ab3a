"""The tests' warm start (``warm.py``): a command forked warm is its own process, in its own working directory and
environment, bounded in time like a cold one."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest
from helpers import warm_start

from loadtest.child_process import free_port


def test_a_warm_command_runs_as_python_m_would_with_its_own_environment_and_status():
    env = {**os.environ, "LOCUST_NO_SUCH_SETTING": "1"}
    done = warm_start("loadtest", ["report", "/nonexistent/results.json"], env=env, timeout=60)
    assert done.code == 2 and "/nonexistent" in done.stderr and "Traceback" not in done.stderr, done.output
    shown = warm_start("locust", ["--version"], env=env, timeout=60)
    assert shown.code == 0 and "locust" in shown.output.lower(), shown.output


def test_a_warm_command_past_its_timeout_is_killed_and_raises():
    port = free_port()
    args = ["emulator", "--upstream", "http://127.0.0.1:9", "--port", str(port)]  # serves until stopped
    began = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        warm_start("loadtest", args, env=dict(os.environ), timeout=3)
    assert time.monotonic() - began < 15
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass  # the child was killed: nothing serves its port
