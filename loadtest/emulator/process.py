"""``loadtest emulator`` in a child process of the tool, in front of a table service."""

from __future__ import annotations

import sys

from ..child_process import ChildProcess
from .budgets import Budgets

__all__ = ["EmulatorProcess"]


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
