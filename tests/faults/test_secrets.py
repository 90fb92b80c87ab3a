"""No account key, SAS signature or connection string in any log line, file or page, at any level."""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import generate_account_sas
from azure.data.tables._models import ResourceTypes
from helpers import SHORT, file_text, results_of, web_ui_process

from loadtest.account.azurite import EmbeddedAzurite
from loadtest.child_process import free_port

ACCOUNT, KEY = "stressacct", base64.b64encode(b"partition-stress test key, not Azurite's own!").decode()


@pytest.fixture(scope="module")
def own_account_azurite():
    """An Azurite serving an account of our own (AZURITE_ACCOUNTS), so no key in play is Azurite's well-known one."""
    previous = os.environ.get("AZURITE_ACCOUNTS")
    os.environ["AZURITE_ACCOUNTS"] = f"{ACCOUNT}:{KEY}"
    try:
        with EmbeddedAzurite() as server:
            yield server
    finally:
        if previous is None:
            os.environ.pop("AZURITE_ACCOUNTS")
        else:
            os.environ["AZURITE_ACCOUNTS"] = previous


def account_sas() -> str:
    return generate_account_sas(
        AzureNamedKeyCredential(ACCOUNT, KEY),
        resource_types=ResourceTypes(object=True, container=True, service=True),
        permission="rwdlacu",  # the table is created and dropped too
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )


def endpoint(azurite: EmbeddedAzurite) -> str:
    return f"http://127.0.0.1:{azurite.port}/{ACCOUNT}"


def secret_forms(sas: str) -> set[str]:
    """The signature raw and percent-encoded, and the key."""
    signature = parse_qs(sas)["sig"][0]
    return {signature, quote(signature, safe=""), quote(signature), KEY}


@pytest.mark.parametrize("client", ["fast", "sdk"])
def test_a_sas_signature_reaches_no_log_line_or_file_even_at_debug(loadtest, own_account_azurite, tmp_path, client):
    sas = account_sas()
    done = loadtest(
        "run",
        *SHORT,
        "--client",
        client,
        "--mix",
        "read=50,upsert=30,scan=10,batch=10",
        "--loglevel",
        "DEBUG",
        "--out",
        str(tmp_path),
        env={"AZURE_STORAGE_CONNECTION_STRING": f"TableEndpoint={endpoint(own_account_azurite)};SharedAccessSignature={sas}"},
    )
    assert done.code == 0, done.output
    assert results_of(tmp_path)["errors"] == {}
    assert "DEBUG" in done.output and len(done.output.splitlines()) > 50  # the debug lines are there, cleaned
    for where, text in [("output", done.output)] + [(p.name, file_text(p)) for p in tmp_path.iterdir()]:
        for secret in secret_forms(sas):
            assert secret not in text, f"a secret in {where}"


def test_a_sas_signature_reaches_no_log_line_page_or_file_of_the_web_ui(own_account_azurite, tmp_path):
    """``loadtest run --web`` at DEBUG: a test started and stopped through the web UI, every page and log read."""
    sas = account_sas()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
    env["AZURE_STORAGE_CONNECTION_STRING"] = f"TableEndpoint={endpoint(own_account_azurite)};SharedAccessSignature={sas}"
    log, pages = tmp_path / "out.log", {}
    args = ["-m", "loadtest", "run", "--web", "--web-port", str(port), "--seed-entities", "100", "--loglevel", "DEBUG"]
    args += ["--logfile", str(tmp_path / "locust.log"), "--out", str(tmp_path / "report")]
    with web_ui_process(args, port=port, env=env, log=log) as (child, url):
        pages["/"] = fetch(url + "/")
        pages["/swarm"] = fetch(url + "/swarm", {"user_count": "3", "spawn_rate": "3"})
        time.sleep(3)
        for path in ("/logs", "/stats/requests", "/partition-stress/", "/partition-stress/data"):
            pages[path] = fetch(url + path)
        pages["/stop"] = fetch(url + "/stop", {})
        deadline = time.monotonic() + 60
        while "/partition-stress/report" not in fetch(url + "/partition-stress/data"):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        pages["/partition-stress/report"] = fetch(url + "/partition-stress/report")
        pages["/logs (after)"] = fetch(url + "/logs")
    assert child.returncode == 0, log.read_text()
    assert json.loads(pages["/stats/requests"])["total_rps"] >= 0 and "DEBUG" in pages["/logs (after)"]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"out.log", "locust.log", "results.json", "report.html"} <= {p.name for p in files}
    texts = [(name, text) for name, text in pages.items()] + [(p.name, file_text(p)) for p in files]
    for where, text in texts:
        for secret in secret_forms(sas):
            assert secret not in text, f"a secret in {where}"


def fetch(url: str, form: dict[str, str] | None = None) -> str:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    with urllib.request.urlopen(url, data=data, timeout=30) as response:
        return response.read().decode()
