"""``loadtest emulator``'s upstream and address checked before anything starts: what it cannot do (an https upstream,
a port that is no number, an address that is not this machine's or is taken) is refused in one line, exit 2, before
its request log is made."""

from __future__ import annotations

import socket

import pytest
from helpers import in_process

from loadtest.emulator import relay


class Served(Exception):
    """The emulator would serve here: its checks passed."""


@pytest.fixture
def emulator(monkeypatch, tmp_path):
    """``loadtest emulator ARGS`` in this process, stopped where it would serve (a check that let a bad address
    through must not serve forever): (exit code or "served", the stderr)."""

    def serve_forever(self) -> None:
        self.socket.close()
        self.handle.__self__.log.file.close()  # the relay's request log
        raise Served

    monkeypatch.setattr(relay.StreamServer, "serve_forever", serve_forever)
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int | str, str]:
        try:
            code, _, stderr = in_process(monkeypatch, "emulator", *args, "--request-log", "requests.json")
        except Served:
            return "served", ""
        return code, stderr

    return run


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--upstream", "https://127.0.0.1:10002"], "--upstream 'https://127.0.0.1:10002': the emulator relays plain HTTP"),
        (["--upstream", "http://h:abc"], "--upstream 'http://h:abc': its port must be a whole number from 1 to 65535"),
        (["--upstream", "http://h:0"], "--upstream 'http://h:0': its port must be a whole number from 1 to 65535"),
        (["--upstream", "ftp://h:1"], "--upstream 'ftp://h:1': the emulator relays plain HTTP"),
        (["--upstream", "http://:10002"], "--upstream 'http://:10002': it names no host"),
        (["--upstream", "http://h:1/devstoreaccount1?x=1"], "--upstream 'http://h:1/devstoreaccount1?x=1': the service's"),
        (
            ["--upstream", "http://127.0.0.1:10002", "--host", "999.1.1.1"],
            "--host '999.1.1.1': cannot listen on '999.1.1.1' port 1",
        ),
        (["--upstream", "http://127.0.0.1:10002", "--host", "::1"], "--host '::1': "),
        (["--upstream", "http://127.0.0.1:10002", "--host", "a\nb"], "--host 'a\\nb': "),
    ],
)
def test_what_the_emulator_cannot_do_is_refused_in_one_line_before_it_starts(emulator, tmp_path, args, said):
    code, stderr = emulator(*args, "--port", "1")
    assert code == 2 and stderr.count("\n") == 1 and said in stderr and "Traceback" not in stderr, (code, stderr)
    assert not (tmp_path / "requests.json").exists()


def test_a_port_in_use_is_refused_naming_it_and_a_good_address_serves(emulator, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, stderr = emulator("--upstream", "http://127.0.0.1:10002", "--port", str(port))
        assert code == 2 and stderr.count("\n") == 1 and f"--port {port}: cannot listen on '127.0.0.1' port {port}" in stderr, (
            stderr
        )
        assert not (tmp_path / "requests.json").exists()
    assert emulator("--upstream", "127.0.0.1:10002", "--port", str(port)) == ("served", "")  # no scheme: http, as before


def test_a_run_in_front_of_a_service_the_emulator_cannot_relay_fails_in_one_line_before_its_child_starts(tmp_path):
    """A run's own emulator (``--emulate-throttling`` before an https Azurite) meets the same rule, as a run's error."""
    from loadtest.emulator.budgets import Budgets
    from loadtest.emulator.process import EmulatorProcess
    from loadtest.exit_codes import RunError

    with pytest.raises(RunError) as refused:
        EmulatorProcess(upstream="https://127.0.0.1:10002", budgets=Budgets())
    assert str(refused.value).startswith("--emulate-throttling in front of 'https://127.0.0.1:10002': the emulator relays")
    assert "\n" not in str(refused.value)
