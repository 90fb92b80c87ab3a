"""A warm start for the tests' ``python -m loadtest``: a process that has imported the tool, Locust and the report's
libraries once, and forks a fresh child per command. The child is the command as a user runs it (its own process,
PID, signals, environment, working directory and outputs; Locust's real runners); only the interpreter's start and
the imports (about 0.9 s a command, measured) are shared. Two servers: one with gevent's patches, for the commands
that load Locust (``entry.GEVENT_COMMANDS``), one without, as ``python -m loadtest`` has them.

Protocol: one JSON line a command on stdin — module (``loadtest`` or ``locust``), args, env, cwd, stdout and stderr
paths, timeout — and one JSON line
back: {"code": exit status} or {"timeout": true} (the child killed by PID).
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import time


def _imports(patched: bool) -> None:
    if patched:
        from gevent import monkey

        monkey.patch_all()
        import locust.main  # noqa: F401
    import loadtest  # noqa: F401  (the user classes a locustfile imports)
    import loadtest.command_line.dispatch  # noqa: F401
    import loadtest.report.charts  # noqa: F401


def _serve(patched: bool) -> dict | None:
    """Answer commands until stdin closes; in a forked child, return its command (the child leaves the loop here)."""
    fork, waitpid, sleep = os.fork, os.waitpid, time.sleep
    if patched:  # the originals: the server never starts gevent's hub, so each child starts as a fresh process would
        from gevent.monkey import get_original

        fork, waitpid = get_original("os", ("fork", "waitpid"))
        sleep = get_original("time", "sleep")
    requests, answers = sys.stdin.buffer, sys.stdout
    for line in requests:
        command = json.loads(line)
        answers.flush()
        sys.stderr.flush()
        pid = fork()
        if pid == 0:
            return command
        deadline = time.monotonic() + command["timeout"]
        while True:
            done, status = waitpid(pid, os.WNOHANG)
            if done:
                answer = {"code": os.waitstatus_to_exitcode(status)}
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                waitpid(pid, 0)
                answer = {"timeout": True}
                break
            sleep(0.01)
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    return None


def _become(command: dict, patched: bool) -> None:
    """Turn this forked child into ``python -m MODULE ARGS`` (``loadtest`` or ``locust``) run in ``cwd`` with ``env`` and
    the given outputs."""
    if patched:
        import gevent

        gevent.reinit()
    os.chdir(command["cwd"])
    os.environ.clear()
    os.environ.update(command["env"])
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, command["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, command["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = ["-m", *command["args"]]
    sys.path[0] = command["cwd"]  # as ``-m`` has it
    runpy.run_module(command["module"], run_name="__main__", alter_sys=True)  # exits with the command's status


if __name__ == "__main__":
    patched = sys.argv[1:] == ["patched"]
    _imports(patched)
    command = _serve(patched)
    if command is not None:
        _become(command, patched)
