"""Reaching and signing in to a target: failures are one line with no secret in it."""

import pytest

from loadtest.azurite import EmbeddedAzurite, azurite_connection_string
from loadtest.connection_string import check_connection_string
from loadtest.errors import RunError, UsageError
from loadtest.redact import AZURITE_KEY
from loadtest.table import TestTable
from loadtest.target import resolve_target


def test_unreachable_endpoint_is_one_clear_error():
    with EmbeddedAzurite() as server:
        port = server.port
    target = resolve_target(connection_string=azurite_connection_string(port))
    with pytest.raises(RunError, match=f"cannot reach http://127.0.0.1:{port}/devstoreaccount1"):
        TestTable.open(target)


def test_a_wrong_account_key_is_refused_without_showing_it(azurite):
    wrong = azurite.connection_string.replace(AZURITE_KEY, "d3JvbmdrZXk" + "A" * 77 + "==")
    with pytest.raises(RunError, match=r"refused the credentials \(403 AuthorizationFailure\)") as caught:
        TestTable.open(resolve_target(connection_string=wrong))
    assert "d3JvbmdrZXk" not in str(caught.value)


# --- connection strings, parsed strictly --------------------------------------------------------------

KEY = "c2VjcmV0LWtleS1mb3ItdGVzdHM="  # base64, and not Azurite's
SAS = "sv=2020-08-04&ss=t&srt=sco&sp=rwdlacu&se=2099-01-01&sig=c2lnbmF0dXJl"
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


REFUSED = [
    (f"AccountKey={KEY}", "names no table endpoint"),  # no AccountName
    (";;;;=", "part 5 is not one of its settings"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=notaurl", "TableEndpoint 'notaurl': must be an http(s) URL"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=http://[::1/x", "must be an http(s) URL"),  # an invalid IPv6 URL
    (f"UseDevelopmentStorage=true;AccountKey={KEY}", "UseDevelopmentStorage=true stands alone"),
    (f"AccountName=acct;AccountKey={KEY}", "names no table endpoint"),  # once aimed at a public host it did not name
    (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={KEY}", "names no table endpoint"),  # likewise
    (f"BlobEndpoint=https://acct.blob.core.windows.net;AccountName=acct;AccountKey={KEY}", "names no table endpoint"),
    (";", "names no table endpoint"),
    ("garbage", "part 1 is not one of its settings"),
    (f"{KEY};AccountName=a;TableEndpoint=http://x/a", "part 1 is not one of its settings"),
    ("AccountName=a;AccountKey=not base64!;TableEndpoint=http://x/a", "AccountKey must be base64"),
    ("AccountName=a;TableEndpoint=http://x/a", "one credential"),
    (f"TableEndpoint=http://x/a;AccountKey={KEY}", "one credential"),  # a key needs its account's name
    (f"AccountName=a;AccountKey={KEY};SharedAccessSignature={SAS};TableEndpoint=http://x/a", "one credential"),
    ("TableEndpoint=https://a.table.core.windows.net;SharedAccessSignature=sv=1", "must hold sig="),
    (f"AccountName=a;accountname=b;AccountKey={KEY};TableEndpoint=http://x/a", "AccountName is given twice"),
    (f"AccountName=;AccountKey={KEY};TableEndpoint=http://x/a", "AccountName is empty"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=http://x:99999/a", "must be an http(s) URL"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=ftp://x/a", "must be an http(s) URL"),
    (f"AccountName=a;AccountKey={KEY};TableEndpoint=https://x/a?{SAS}", "no query"),
    (f"AccountName=a;AccountKey={KEY};EndpointSuffix=evil.example/x@", "must be a host name"),
    (f"AccountName=a b;AccountKey={KEY};EndpointSuffix=core.windows.net", "AccountName 'a b' must be letters"),
    (f"DefaultEndpointsProtocol=ftp;AccountName=a;AccountKey={KEY};EndpointSuffix=core.windows.net", "http or https"),
    (f"Foo=bar;AccountName=a;AccountKey={KEY};EndpointSuffix=core.windows.net", "'Foo' is not one of its settings"),
]


@pytest.mark.parametrize("connection_string,rule", REFUSED)
def test_a_malformed_connection_string_is_a_usage_error_without_its_secret(connection_string, rule):
    with pytest.raises(UsageError) as caught:
        check_connection_string(connection_string)
    message = str(caught.value)
    assert message.startswith("--connection-string: ") and rule in message, message
    assert KEY not in message and "c2lnbmF0dXJl" not in message and "sig=c2" not in message
    with pytest.raises(UsageError):
        resolve_target(connection_string=connection_string)
