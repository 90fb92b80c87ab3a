"""No account key, SAS signature or connection string in any log line, file or page, at any level."""

from __future__ import annotations

import base64
import os
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import generate_account_sas
from azure.data.tables._models import ResourceTypes
from test_cli import SHORT, results_of

from loadtest.azurite import EmbeddedAzurite

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


@pytest.mark.parametrize("client", ["fast", "sdk"])
def test_a_sas_signature_reaches_no_log_line_or_file_even_at_debug(loadtest, own_account_azurite, tmp_path, client):
    sas = generate_account_sas(
        AzureNamedKeyCredential(ACCOUNT, KEY),
        resource_types=ResourceTypes(object=True, container=True, service=True),
        permission="rwdlacu",  # the table is created and dropped too
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
    signature = parse_qs(sas)["sig"][0]
    endpoint = f"http://127.0.0.1:{own_account_azurite.port}/{ACCOUNT}"
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
        env={"AZURE_STORAGE_CONNECTION_STRING": f"TableEndpoint={endpoint};SharedAccessSignature={sas}"},
    )
    assert done.code == 0, done.output
    assert results_of(tmp_path)["errors"] == {}
    assert "DEBUG" in done.output and len(done.output.splitlines()) > 50  # the debug lines are there, cleaned
    forms = {signature, quote(signature, safe=""), quote(signature), KEY}
    for where, text in [("output", done.output)] + [(p.name, p.read_text()) for p in tmp_path.iterdir()]:
        for secret in forms:
            assert secret not in text, f"a secret in {where}"
