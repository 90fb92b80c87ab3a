"""Child processes the tool starts and stops: the embedded Azurite and the throttling emulator.

Each runs on a free loopback port, is stopped by its PID (SIGTERM, then SIGKILL), and dies
with the tool even when the tool is killed (Linux's parent-death signal).
"""

from __future__ import annotations

import ctypes
import logging
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from .errors import RunError
from .redact import AZURITE_ACCOUNT, AZURITE_KEY

if TYPE_CHECKING:
    from .emulator import Budgets

__all__ = ["ChildProcess", "EmbeddedAzurite", "EmulatorProcess", "azurite_connection_string", "free_port"]

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def azurite_connection_string(port: int, host: str = "127.0.0.1", scheme: str = "http") -> str:
    return (
        f"DefaultEndpointsProtocol={scheme};AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"TableEndpoint={scheme}://{host}:{port}/{AZURITE_ACCOUNT};"
    )


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


class EmbeddedAzurite(ChildProcess):
    """Azurite's table service from node_modules, in memory, on a free loopback port.

    Optionally over HTTPS (``cert``: a PEM certificate and its key), with Azure AD tokens checked
    (``oauth``: Azurite's ``basic`` level: audience, issuer and expiry, not the signature; HTTPS only),
    and every request's headers in a debug log (``debug_log``).
    """

    name = "Azurite table service"

    def __init__(
        self, *, cert: tuple[Path, Path] | None = None, oauth: bool = False, debug_log: Path | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.cert, self.oauth, self.debug_log = cert, oauth, debug_log

    @property
    def scheme(self) -> str:
        return "https" if self.cert else "http"

    @property
    def connection_string(self) -> str:
        return azurite_connection_string(self.port, self.host, self.scheme)

    @property
    def endpoint(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}/{AZURITE_ACCOUNT}"

    def command(self) -> list[str]:
        if not shutil.which("node"):
            raise RunError(
                "the embedded Azurite needs Node.js 18+ and npm (https://nodejs.org, or apt-get install nodejs npm),"
                f" then `npm ci` in {self.root}; or point the tool at a table service with --connection-string"
            )
        binary = self.root / "node_modules" / ".bin" / "azurite-table"
        if not binary.exists():
            found = shutil.which("azurite-table")
            if not found:
                raise RunError(f"Azurite is not installed: run `npm ci` in {self.root} (or pass --connection-string)")
            binary = Path(found)
        return [
            str(binary),
            "--inMemoryPersistence",
            "--disableTelemetry",
            "--silent",
            "--tableHost",
            self.host,
            "--tablePort",
            str(self.port),
            *(("--cert", str(self.cert[0]), "--key", str(self.cert[1])) if self.cert else ()),
            *(("--oauth", "basic") if self.oauth else ()),
            *(("--debug", str(self.debug_log)) if self.debug_log else ()),
        ]


class EmulatorProcess(ChildProcess):
    """``loadtest emulator`` in a child process, in front of ``upstream``."""

    name = "Throttling emulator"

    def __init__(self, *, upstream: str, budgets: Budgets) -> None:
        super().__init__()
        self.upstream, self.budgets = upstream, budgets

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "loadtest",
            "emulator",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--upstream",
            self.upstream,
            *self.budgets.to_args(),
        ]
