"""The two ways a run ends before it measures anything, each with the contract's exit code."""

from __future__ import annotations

__all__ = ["ToolError", "UsageError", "RunError", "EXIT_OK", "EXIT_RUN_FAILED", "EXIT_USAGE", "EXIT_CHECK_FAILED"]

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_USAGE = 2
EXIT_CHECK_FAILED = 3


class ToolError(Exception):
    """An error shown to the user as one line, never as a traceback."""

    exit_code = EXIT_RUN_FAILED


class UsageError(ToolError):
    """Bad input: the message names the rule and the valid values."""

    exit_code = EXIT_USAGE


class RunError(ToolError):
    """The run could not be done: unreachable target, refused credentials, missing Azurite."""

    exit_code = EXIT_RUN_FAILED
