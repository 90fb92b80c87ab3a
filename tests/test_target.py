"""Reaching and signing in to a target: failures are one line with no secret in it."""

import pytest

from loadtest.azurite import EmbeddedAzurite, azurite_connection_string
from loadtest.errors import RunError
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
