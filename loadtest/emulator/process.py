"""``loadtest emulator`` in a child process of the tool, in front of a table service."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..child_process import ChildProcess
from ..exit_codes import RunError, UsageError
from .budgets import Budgets

__all__ = ["EmulatorProcess", "checked_upstream"]


class EmulatorProcess(ChildProcess):
    """``loadtest emulator`` in a child process, in front of ``upstream``; its range splits recorded for the run."""

    name = "Throttling emulator"

    def __init__(self, *, upstream: str, budgets: Budgets, request_log: str = "") -> None:
        super().__init__()
        try:  # the child's own rule, judged here: a service it cannot relay (Azurite over https) fails the run in one line
            upstream = checked_upstream("--upstream", upstream)
        except UsageError as err:
            raise RunError(f"--emulate-throttling in front of {upstream[:200]!r}: {str(err).split(': ', 1)[-1]}") from None
        self.upstream, self.budgets, self.request_log = upstream, budgets, request_log
        descriptor, name = tempfile.mkstemp(prefix="emulator-splits-", suffix=".jsonl")
        os.close(descriptor)
        self.splits_file = Path(name)

    def splits(self, first: float) -> list[dict[str, Any]]:
        """The range splits so far, their times in seconds from ``first`` (the run's first second, epoch)."""
        try:
            lines = self.splits_file.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        splits = [json.loads(line) for line in lines if line.strip()]
        return [{**s, "t": round(s["t"] - first, 3), "offline_until_t": round(s["offline_until_t"] - first, 3)} for s in splits]

    def stop(self) -> None:
        super().stop()
        self.splits_file.unlink(missing_ok=True)

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
            "--splits-file",
            str(self.splits_file),
            *(("--request-log", self.request_log) if self.request_log else ()),
        ]


def checked_upstream(flag: str, value: Any) -> str:
    """``--upstream``: the table service the emulator relays to, as ``http://HOST:PORT`` (without a scheme: http). The
    relay speaks plain HTTP to it and forwards each request's own path, so TLS, a path and a port that is no number
    are refused here, before anything starts (https was relayed in plaintext to port 80)."""
    given = ("" if value is None else str(value)).strip()
    said = f"{flag} {given[:200]!r}"
    valid = "valid: the table service's http://HOST:PORT, e.g. Azurite's http://127.0.0.1:10002"
    try:
        parts = urlsplit(given if "://" in given else f"http://{given}")
    except ValueError as err:  # an unclosed [ of an IPv6 address
        raise UsageError(f"{said}: not an address ({err}); {valid}") from None
    if parts.scheme != "http":
        raise UsageError(
            f"{said}: the emulator relays plain HTTP and holds no TLS; {valid}. Azure's https endpoints throttle on their "
            "own: run against them without the emulator"
        )
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range
        port = 0
    if port == 0:
        raise UsageError(f"{said}: its port must be a whole number from 1 to 65535; {valid}")
    if not parts.hostname:
        raise UsageError(f"{said}: it names no host; {valid}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        raise UsageError(f"{said}: the service's address alone (requests keep their own path and query); {valid}")
    return f"http://{parts.netloc}"
