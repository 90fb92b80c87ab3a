"""A server the tool starts in a child process: on a free loopback port, ready when it answers, stopped by its
PID (SIGTERM, then SIGKILL), and dying with the tool even when the tool is killed (Linux's parent-death signal).
"""

from __future__ import annotations

import ctypes
import logging
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Self

from .exit_codes import RunError

__all__ = ["PROJECT_ROOT", "ChildProcess", "free_port"]

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """Linux: SIGTERM the child if this process dies without stopping it (kill -9, crash)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class ChildProcess:
    """A server in a child process on a free loopback port: started when it answers, stopped by PID."""

    name = "child process"

    def __init__(self, *, root: Path = PROJECT_ROOT, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.root = root
        self.host = host
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self, timeout: float = 20.0) -> Self:
        command = self.command()
        self.process = subprocess.Popen(
            command,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            start_new_session=True,  # Ctrl-C reaches the tool, which stops the child itself
        )
        try:
            self._wait_until_ready(timeout)
        except BaseException:  # failed, or stopped (Ctrl-C): no child is left running
            self.stop()
            raise
        log.info("%s on %s:%s (pid %s)", self.name, self.host, self.port, self.pid)
        return self

    def _wait_until_ready(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = (self.process.stderr.read() if self.process.stderr else b"").decode(errors="replace")
                raise RunError(f"{self.name} exited at start (code {self.process.returncode}): {err.strip()[:300]}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RunError(f"{self.name} did not answer on {self.host}:{self.port} within {timeout:.0f} s")

    def stop(self) -> None:
        """Stop by PID: SIGTERM, then SIGKILL after 5 s."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.info("%s (pid %s) stopped", self.name, process.pid)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
