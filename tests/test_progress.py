"""Long work said as it goes (``progress``): a line every few seconds where no terminal shows a bar, with what is
done, its share, the rate and the time left, and nothing for work done sooner; on a terminal, ``loadtest traffic``
shows a bar on stderr, its stdout what it always prints."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time

from helpers import ROOT

from loadtest.progress import EVERY_S, Progress


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_without_a_terminal_a_line_every_few_seconds_says_what_is_done_its_share_rate_and_time_left():
    clock, stream = _Clock(), io.StringIO()
    with Progress("traffic: reading", 4 << 20, "bytes", detail=lambda: "12 records counted", stream=stream, clock=clock) as said:
        said.advance(1 << 20)  # at once: nothing said
        assert stream.getvalue() == ""
        clock.now += EVERY_S
        said.advance(1 << 20)
        clock.now += 1
        said.advance(1)  # within the next few seconds: nothing more
    lines = stream.getvalue().splitlines()
    assert lines == ["traffic: reading: 2.0 MB of 4.0 MB (50%), 12 records counted, 409.6 kB/s, about 5 s left"]


def test_work_of_unknown_size_says_what_is_done_and_its_rate_only():
    clock, stream = _Clock(), io.StringIO()
    with Progress("merge", None, "engines", stream=stream, clock=clock) as said:
        clock.now += 2 * EVERY_S
        said.advance(3)
    assert stream.getvalue() == "merge: 3 engines, 0.3 engines/s\n"


RECORDS = 3_000


def _classic_day(path) -> None:
    """Storage Analytics records (version 1.0, its 30 fields) over a few hours. Few: a bar is drawn as it starts
    and once more as it ends, however soon that is."""
    lines = []
    for i in range(RECORDS):
        at = f"2026-11-24T{10 + i // 1_000:02d}:{i // 400 % 60:02d}:{i // 7 % 60:02d}.1000000Z"
        url = f"http://127.0.0.1:10002/acct/orders(PartitionKey='k{i % 50}',RowKey='r{i}')"
        fields = ["1.0", at, "QueryEntity", "Success", "200", "5", "3", "authenticated", "acct", "acct", "table",
                  f'"{url}"', '"/acct/orders"', f"id-{i}", "0", "10.0.0.1:5000", "2019-02-02", "500", "0", "300", "1324",
                  "0", "", "", '""', "", "", '"sdk"', "", f"c-{i}"]  # fmt: skip
        lines.append(";".join(fields) + "\n")
    path.write_text("".join(lines))


def test_traffic_on_a_terminal_shows_a_bar_on_stderr_and_keeps_stdout_as_it_was(tmp_path):
    log = tmp_path / "000000.log"
    _classic_day(log)
    primary, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # a terminal's, as a user has it
    child = subprocess.Popen(
        [sys.executable, "-m", "loadtest", "traffic", str(log), "--no-report", "--out", str(tmp_path / "out")],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=secondary,
    )  # fmt: skip
    os.close(secondary)
    shown, deadline = b"", time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            shown += chunk
        elif child.poll() is not None:
            break
    stdout = child.communicate(timeout=60)[0].decode()
    os.close(primary)
    assert child.returncode in (0, 3), stdout
    text = shown.decode("utf-8", errors="replace")
    assert "traffic: reading" in text and "━" in text, text[-2000:]  # rich's bar, on stderr
    assert stdout.startswith(f"Read {RECORDS:,} records") and "━" not in stdout and "traffic: reading" not in stdout
