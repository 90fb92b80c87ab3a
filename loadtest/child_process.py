"""A server the tool starts in a child process: on a free loopback port, ready when it answers, stopped by its
PID (SIGTERM, then SIGKILL), and dying with the tool even when the tool is killed (Linux's parent-death signal).
"""

from __future__ import annotations

import logging
import os
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


#: The child's first step, in an interpreter of its own: Linux's PR_SET_PDEATHSIG (SIGTERM the child if the tool
#: dies without stopping it: kill -9, a crash), the tool still its parent (else it died already), then the server
#: in its folder. Started by ``posix_spawn``, which runs nothing of this process in the child: a fork (gevent's
#: Popen forks in Python, and so does a ``preexec_fn``) runs this process's fork hooks there, and OpenTelemetry's
#: starts a thread, which under gevent switches to the hub: with --otel, a master's Azurite child ran on as a copy of
#: the master and never exec'd. About 40 ms a start (measured: the interpreter with -S and ctypes).
_FIRST_STEP = (
    "import ctypes,os,signal,sys\n"
    "try:ctypes.CDLL('libc.so.6').prctl(1,signal.SIGTERM)\n"
    "except (OSError,AttributeError):pass\n"
    "os.getppid()==int(sys.argv[1]) or sys.exit(1)\n"
    "os.chdir(sys.argv[2])\n"
    "os.execvp(sys.argv[3],sys.argv[3:])"
)


class Spawned:
    """A child started by ``posix_spawn`` in a session of its own (Ctrl-C reaches the tool, which stops the child
    itself), with what of ``subprocess.Popen`` the servers need: its PID, exit status and signals, and its stderr."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        read, write = os.pipe()
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, write, 2),
            (os.POSIX_SPAWN_CLOSE, read),
        ]
        argv = [sys.executable, "-S", "-c", _FIRST_STEP, str(os.getpid()), str(cwd), *command]
        try:
            self.pid = os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=actions, setsid=True)
        finally:
            os.close(write)
        self.stderr = os.fdopen(read, "rb")
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already
                pid, status = self.pid, 0
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            time.sleep(0.02)
        return self.returncode  # type: ignore[return-value]

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ChildProcess:
    """A server in a child process on a free loopback port: started when it answers, stopped by PID."""

    name = "child process"

    def __init__(self, *, root: Path = PROJECT_ROOT, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.root = root
        self.host = host
        self.port = port or free_port()
        self.process: Spawned | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self, timeout: float = 20.0) -> Self:
        self.process = Spawned(self.command(), self.root)
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
        if process is None:
            return
        if process.poll() is not None:
            process.stderr.close()
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        process.stderr.close()
        log.info("%s (pid %s) stopped", self.name, process.pid)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
