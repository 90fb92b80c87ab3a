"""Reaching and signing in to a target: failures are one line with no secret in it."""

import pytest
from helpers import KEY, REFUSED, SAS

from loadtest.account.azurite import azurite_connection_string
from loadtest.account.connection_string import check_connection_string
from loadtest.account.endpoint import resolve_target
from loadtest.child_process import free_port
from loadtest.exit_codes import RunError, UsageError
from loadtest.redact import AZURITE_KEY
from loadtest.testbed.table import TestTable


def test_unreachable_endpoint_is_one_clear_error():
    port = free_port()  # a loopback port nobody listens on
    target = resolve_target(connection_string=azurite_connection_string(port))
    with pytest.raises(RunError, match=f"cannot reach http://127.0.0.1:{port}/devstoreaccount1"):
        TestTable.open(target)


def test_a_wrong_account_key_is_refused_without_showing_it(azurite):
    wrong = azurite.connection_string.replace(AZURITE_KEY, "d3JvbmdrZXk" + "A" * 77 + "==")
    with pytest.raises(RunError, match=r"refused the credentials \(403 AuthorizationFailure\)") as caught:
        TestTable.open(resolve_target(connection_string=wrong))
    assert "d3JvbmdrZXk" not in str(caught.value)


# --- connection strings, parsed strictly --------------------------------------------------------------

ACCEPTED = [
    (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={KEY};EndpointSuffix=core.windows.net",
     "https://acct.table.core.windows.net"),  # the portal's form
    (f"AccountName=acct;AccountKey={KEY};EndpointSuffix=core.chinacloudapi.cn", "https://acct.table.core.chinacloudapi.cn"),
    (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;",
     "http://127.0.0.1:10002/devstoreaccount1"),
    (f"TableEndpoint=https://acct.table.core.windows.net/;SharedAccessSignature={SAS}", "https://acct.table.core.windows.net"),
    (f"BlobEndpoint=https://acct.blob.core.windows.net/;TableEndpoint=https://acct.table.core.windows.net/;"
     f"SharedAccessSignature=?{SAS}", "https://acct.table.core.windows.net"),  # the portal's SAS form
    (f" accountname = acct ; accountkey = {KEY} ; tableendpoint = http://[::1]:10002/acct ; ", "http://[::1]:10002/acct"),
    ("UseDevelopmentStorage=true", "http://127.0.0.1:10002/devstoreaccount1"),
    ("usedevelopmentstorage=TRUE;", "http://127.0.0.1:10002/devstoreaccount1"),
]  # fmt: skip


@pytest.mark.parametrize("connection_string,endpoint", ACCEPTED)
def test_a_connection_string_aims_only_where_it_names_and_the_sdk_agrees(connection_string, endpoint):
    target = resolve_target(connection_string=connection_string)
    assert target.endpoint == endpoint
    assert target.service().url.rstrip("/") == endpoint  # the SDK reads the same endpoint, never one it derived


@pytest.mark.parametrize("connection_string,rule", REFUSED)
def test_a_malformed_connection_string_is_a_usage_error_without_its_secret(connection_string, rule):
    with pytest.raises(UsageError) as caught:
        check_connection_string(connection_string)
    message = str(caught.value)
    assert message.startswith("--connection-string: ") and rule in message, message
    assert KEY not in message and "c2lnbmF0dXJl" not in message and "sig=c2" not in message
    with pytest.raises(UsageError):
        resolve_target(connection_string=connection_string)
