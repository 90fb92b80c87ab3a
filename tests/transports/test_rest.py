"""The lean REST client against a real Azurite: types round-trip with azure-data-tables both ways,
SAS sign-in, and the answers it parses (errors, a failing batch) classified as the SDK classifies them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import EdmType, TableClient, TableSasPermissions, generate_account_sas
from azure.data.tables._models import ResourceTypes
from helpers import Hooks, typed

from loadtest.account.endpoint import resolve_target
from loadtest.redact import AZURITE_ACCOUNT, AZURITE_KEY
from loadtest.service.error_codes import ServiceError
from loadtest.service.operations import OPERATIONS
from loadtest.service.retry import parse_retry
from loadtest.transports.rest import RestTransport, entity_of


def fast(target, table) -> RestTransport:
    return RestTransport(target=target, table=table.name, retry=parse_retry("none"), seed=None, hooks=Hooks())


def sdk(target, table) -> TableClient:
    return TableClient.from_connection_string(target.connection_string, table_name=table.name)


def test_what_the_sdk_writes_the_fast_client_reads_back_equal(target, table):
    entity = typed("types", "sdk-wrote")
    with sdk(target, table) as client:
        client.create_entity(entity)
        expected = client.get_entity("types", "sdk-wrote")
    got = fast(target, table).get("types", "sdk-wrote")
    assert dict(got) == dict(expected)
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in expected.items()}
    assert got.metadata["etag"] == expected.metadata["etag"]
    assert got.metadata["timestamp"] == expected.metadata["timestamp"]


def test_what_the_fast_client_writes_the_sdk_reads_back_equal(target, table):
    entity = typed("types", "fast-wrote")
    fast(target, table).insert(entity)
    with sdk(target, table) as client:
        back = client.get_entity("types", "fast-wrote")
        reference = typed("types", "ref")
        client.create_entity(reference)
        again = client.get_entity("types", "ref")
    assert {k: v for k, v in back.items() if k != "RowKey"} == {k: v for k, v in again.items() if k != "RowKey"}
    for name in ("int32", "double", "flag", "when", "guid", "blob", "text"):
        assert back[name] == entity[name], name
    assert back["int64"].value == 2**40 + 7 and back["int64"].edm_type == EdmType.INT64


def test_entity_conversion_matches_the_sdks_own():
    from azure.data.tables._deserialize import _convert_to_entity

    for stamp in ("2026-11-22T11:36:01.1234567Z", "2026-11-22T11:36:01Z", "2026-11-22T11:36:01.5Z"):
        row = {
            "odata.etag": 'W/"x"',
            "PartitionKey": "p",
            "RowKey": "r",
            "Timestamp": stamp,
            "Timestamp@odata.type": "Edm.DateTime",
            "n": 3,
            "big@odata.type": "Edm.Int64",
            "big": "12345678901",
        }
        ours, theirs = entity_of(dict(row)), _convert_to_entity(dict(row))
        assert ours == theirs and ours.metadata == theirs.metadata
        assert ours.metadata["timestamp"].tables_service_value == stamp


def test_an_account_sas_signs_the_fast_client_in(azurite, table):
    sas = generate_account_sas(
        AzureNamedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
        resource_types=ResourceTypes(object=True, container=True, service=True),
        permission=TableSasPermissions(read=True, write=True, update=True, delete=True, add=True, list=True),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
    target = resolve_target(
        connection_string=f"TableEndpoint=http://127.0.0.1:{azurite.port}/{AZURITE_ACCOUNT};SharedAccessSignature={sas}"
    )
    client = fast(target, table)
    client.insert({"PartitionKey": "sas", "RowKey": "1", "n": 1})
    assert client.get("sas", "1")["n"] == 1
    assert "sig=" not in repr(client.auth)


def test_errors_carry_the_service_code_and_a_failing_batch_names_its_operation(target, table):
    client = fast(target, table)
    with pytest.raises(ServiceError) as missing:
        client.get("nobody", "here")
    assert (missing.value.status, missing.value.code) == (404, "ResourceNotFound")
    client.insert({"PartitionKey": "b", "RowKey": "2", "n": 0})
    insert = OPERATIONS["insert"]
    with pytest.raises(ServiceError) as failed:
        client.batch([(insert, {"PartitionKey": "b", "RowKey": str(i), "n": i}) for i in range(4)])
    assert failed.value.code == "EntityAlreadyExists" and failed.value.operation == 2
    with sdk(target, table) as reference:
        assert [e["RowKey"] for e in reference.query_entities("PartitionKey eq 'b'")] == ["2"]  # atomic: nothing else


def test_plain_entities_and_keys_that_need_quoting_round_trip(target, table):
    """Strings, booleans and 32-bit integers skip the SDK's converter; keys with quotes and spaces are encoded."""
    client = fast(target, table)
    entity = {"PartitionKey": "it's a key", "RowKey": "naïve ~_.-", "text": "x" * 100, "n": 2**31 - 1, "flag": False}
    client.insert(entity)
    client.upsert({**entity, "n": -(2**31)}, "merge")
    with sdk(target, table) as reference:
        back = reference.get_entity("it's a key", "naïve ~_.-")
    assert dict(back) == {**entity, "n": -(2**31)}
    assert dict(client.get("it's a key", "naïve ~_.-")) == dict(back)
