"""The command's entry: gevent patched first for the commands that load Locust or run on gevent, never late."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT

from loadtest.entry import GEVENT_COMMANDS


def test_a_command_that_loads_locust_patches_gevent_before_ssl_is_imported(tmp_path):
    """``simulate`` loads the metrics (a Locust listener) after the options (which import the SDK, and ssl): without
    the entry's patches first, Locust patched ssl late and warned (a RecursionError waiting on a real account)."""
    assert "simulate" in GEVENT_COMMANDS and "report" not in GEVENT_COMMANDS
    done = subprocess.run(
        [sys.executable, "-m", "loadtest", "simulate", "--arrival-rate", "50", "-t", "5s", "--out", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MonkeyPatchWarning" not in done.stderr and "Monkey-patching" not in done.stderr, done.stderr
