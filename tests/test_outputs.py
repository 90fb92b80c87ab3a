"""Output files: written whole or not at all, with the mode a new file gets under the user's umask."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from loadtest.exit_codes import UsageError
from loadtest.outputs import check_out, write_text

NOBODY = 65534


@pytest.fixture
def umask():
    """Set a umask for one test, then restore this process's own."""
    before = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(before)


def test_an_output_file_gets_the_mode_of_a_new_file_under_the_umask(umask, tmp_path):
    umask(0o022)
    assert stat.S_IMODE(write_text(tmp_path / "report.html", "<p>").stat().st_mode) == 0o644
    umask(0o077)
    assert stat.S_IMODE(write_text(tmp_path / "results.json", "{}").stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


@pytest.mark.skipif(os.geteuid() != 0, reason="reading as another user needs root to become that user")
def test_a_report_written_under_umask_022_is_readable_by_another_user(umask):
    """As a web server's or a CI step's user would read it: a child process that has become ``nobody``."""
    umask(0o022)
    folder = Path(tempfile.mkdtemp())
    try:
        folder.chmod(0o755)
        report = write_text(folder / "report.html", "<p>the report</p>")
        read = subprocess.run(
            ["cat", str(report)],
            preexec_fn=lambda: os.setuid(NOBODY),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert read.returncode == 0 and "the report" in read.stdout, read.stderr
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize(
    "given,said",
    [
        ("out\x00put", "not a folder name this system can write (embedded null byte)"),
        ("o" * 5000, "not a folder name this system can write (File name too long)"),
    ],
    ids=["a NUL", "5 KB"],
)
def test_an_out_no_file_system_takes_is_refused_in_one_line(given, said, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as refused:
        check_out(given)
    assert str(refused.value).startswith("--out '") and said in str(refused.value) and "\n" not in str(refused.value)
    assert not list(tmp_path.iterdir())
