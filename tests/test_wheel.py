"""The package as others install it: a wheel carrying its locustfile, installed into a fresh venv with its pinned
dependencies, run by that venv's Locust (never this checkout's code) against the session's Azurite; and the engine
recipes in deploy/, run from that same install with their own files and settings."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
import yaml
from helpers import ROOT
from packaging.requirements import Requirement

from loadtest.account.azurite import azurite_connection_string

ALT = ROOT / "deploy" / "azure-load-testing"
K8S = ROOT / "deploy" / "kubernetes"
SHORT = {"LOCUST_USERS": "2", "LOCUST_SPAWN_RATE": "2", "LOCUST_RUN_TIME": "2s", "LOCUST_SEED_ENTITIES": "60"}


def run(args: list, *, cwd: Path, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv holding the wheel alone, its dependencies those this checkout pinned (requirements.lock), seen
    through a .pth line rather than unpacked again (10 s of the suite): ``pip check`` proves the wheel's pins hold
    there, and ``test_every_module_the_wheel_imports_is_among_its_dependencies`` that nothing it imports is missing
    from them (what a fresh install of the wheel alone would show)."""
    base = tmp_path_factory.mktemp("wheel")
    # pip builds in the checkout, and setuptools packs what its build/ holds: a module moved since the last build
    # would ship from there (the public face passed here while a fresh clone's wheel failed): build afresh
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", ROOT, "-w", base / "dist"], cwd=base)
    (wheel,) = (base / "dist").glob("partition_stress-*.whl")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=base)  # this pip installs into it
    pip = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python"]
    run([*pip, "install", "--quiet", "--no-compile", "--no-deps", wheel], cwd=base)
    (here,) = [Path(p) for p in site.getsitepackages() if Path(p).is_relative_to(sys.prefix)]
    (installed_site,) = venv.glob("lib/python*/site-packages")
    (installed_site / "pinned-dependencies.pth").write_text(f"{here}\n")  # a path only: its .pth files (the editable
    # install of this checkout among them) are not run, so `loadtest` is the wheel's
    run([*pip, "check"], cwd=base)
    return venv


def locust(venv: Path) -> list:
    """The venv's Locust, as its ``locust`` command runs it (its script is in the dependencies' venv)."""
    return [venv / "bin" / "python", "-m", "locust"]


def clean_env(azurite, **settings: str) -> dict[str, str]:
    """The environment an engine gives Locust: no PYTHONPATH to this checkout, the target's secret, LOCUST_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LOCUST_", "VIRTUAL_ENV"))}
    return {**env, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string, **settings}


def results_under(folder: Path) -> dict:
    (found,) = folder.glob("**/results.json")
    return json.loads(found.read_text())


def conf_lines(path: Path) -> dict[str, str]:
    lines = (line.split("=", 1) for line in path.read_text().splitlines() if line.strip() and not line.startswith("#"))
    return {key.strip().replace("-", "_"): value.strip() for key, value in lines}


def settings_given(results: dict, given: dict[str, str]) -> dict[str, tuple]:
    """The tool's settings the run did not take as given (empty when every one was honoured)."""
    settings = results["run"]["settings"]
    return {k: (v, settings[k]) for k, v in given.items() if k in settings and str(settings[k]) != v and k != "seed_entities"}


def test_the_public_face_imports_from_the_installed_wheel(installed, tmp_path):
    """What a user's locustfile imports, from the wheel's own package (not this checkout's), with its curated __all__;
    and the web UI's build (package data)."""
    code = (
        "import loadtest\n"
        "from loadtest import CeilingShape, HotPartitionUser, TableUser\n"
        "assert issubclass(HotPartitionUser, TableUser) and CeilingShape.__module__ == 'loadtest.ceiling.shape'\n"
        "assert all(hasattr(loadtest, name) for name in loadtest.__all__)\n"
        "import loadtest.plugin\n"
        "from loadtest.live import locust_ui\n"
        "assert locust_ui.built(), 'the web UI with the Partitions tab is not in the wheel'\n"
        "print(loadtest.__file__)"
    )
    done = run([installed / "bin" / "python", "-c", code], cwd=tmp_path, env=clean_env_of_checkout())
    assert Path(done.stdout.strip()).is_relative_to(installed), done.stdout


def imported_modules(package: Path) -> set[str]:
    """Every absolute module name the package's source imports, stdlib and itself aside."""
    names = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    return {n for n in names if n.split(".")[0] not in {*sys.stdlib_module_names, package.name}}


def requirement_closure(name: str, extras: tuple[str, ...] = ()) -> set[str]:
    """The distributions installing ``name`` (with its ``extras``) brings here (its requirements, theirs, ...; their
    extras and other platforms' aside), normalised."""
    seen, todo = set(), [(name, ("", *extras))]
    while todo:
        dist, wanted = todo.pop()
        if dist not in seen:
            seen.add(dist)
            needs = [Requirement(r) for r in importlib.metadata.requires(dist) or []]
            todo += [
                (r.name.lower().replace("_", "-"), ("",))
                for r in needs
                if not r.marker or any(r.marker.evaluate({"extra": extra}) for extra in wanted)
            ]
    return seen


def test_every_module_the_wheel_imports_is_among_its_dependencies(installed):
    """A dependency the code uses and the wheel forgot fails here, as it would in a fresh venv of the wheel alone."""
    (package,) = installed.glob("lib/python*/site-packages/loadtest")
    owners = {}  # a module's file (source, package or extension) as its distribution's RECORD names it -> the distribution
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"].lower().replace("_", "-")
        for file in dist.files or []:
            owners.setdefault(file.as_posix(), name)
    closure = requirement_closure("partition-stress", extras=("otel",))  # telemetry imports it only if installed
    missing = {}
    for name in sorted(imported_modules(package)):
        parts = name.split(".")
        found = [
            owners[f]
            for n in range(len(parts), 0, -1)  # the module, else the package holding the imported name
            for f in ("/".join(parts[:n]) + end for end in (".py", "/__init__.py", *EXTENSION_SUFFIXES))
            if f in owners
        ]
        if not found or found[0] not in closure:
            missing[name] = found[:1]
    assert len(closure) > 20 and missing == {}, missing


def clean_env_of_checkout() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}


def test_the_installed_locustfile_runs_headless_against_azurite(installed, azurite, tmp_path):
    locustfile = Path(run([installed / "bin" / "loadtest", "locustfile"], cwd=tmp_path).stdout.strip())
    assert locustfile.is_file() and installed in locustfile.parents  # the wheel's own, not this checkout's
    run(
        [*locust(installed), "-f", locustfile, "--headless", "--out", tmp_path / "out"],
        cwd=tmp_path,
        env=clean_env(azurite, **SHORT),
    )
    results = results_under(tmp_path / "out")
    assert results["run"]["target_kind"] == "connection-string" and results["errors"] == {}
    assert {r["op_class"] for r in results["partitions"]} >= {"GET", "PUT"} and results["account"]["entities"] > 0
    assert (tmp_path / "out" / "report.html").is_file()


def test_the_azure_load_testing_recipe_runs_as_its_engine_would(installed, azurite, blob_service, tmp_path):
    """test.yaml's files exist, its secret is a Key Vault reference, and its locustfile, locust.conf and env run as one of
    its engines: its outputs uploaded to the container the recipe names, where `loadtest merge` finds them."""
    test = yaml.safe_load((ALT / "test.yaml").read_text())
    assert test["testType"] == "Locust" and (ALT / test["testPlan"]).is_file()
    assert (ALT / test["properties"]["userPropertyFile"]).is_file()
    assert all((ALT / f).is_file() or f.endswith(".whl") for f in test["configurationFiles"])
    (secret,) = test["secrets"]
    assert secret["name"] == "AZURE_STORAGE_CONNECTION_STRING" and secret["value"].startswith("https://")
    env = {e["name"]: str(e["value"]) for e in test["env"]}
    assert set(env) >= {"LOCUST_USERS", "LOCUST_RUN_TIME", "LOCUST_UPLOAD"} and test["engineInstances"] == 3
    for name in [*test["configurationFiles"], test["testPlan"], test["properties"]["userPropertyFile"]]:
        if not name.endswith(".whl"):
            (tmp_path / name).write_bytes((ALT / name).read_bytes())  # ALT puts every file beside the test plan
    conf = test["properties"]["userPropertyFile"]
    with (tmp_path / conf).open("a") as file:
        file.write("\npartition-target = 1234\n")  # proof that the engine reads this file
    account = azurite_connection_string(azurite.port, blob_port=blob_service.port)  # ALT's: the account's blob endpoint too
    engine = {**clean_env(azurite, **{**env, **SHORT}), "AZURE_STORAGE_CONNECTION_STRING": account}
    run(  # as az load test-run create --env LOCUST_RUN_ID=... gives it
        [*locust(installed), "-f", test["testPlan"], "--config", conf, "--headless"],
        cwd=tmp_path,
        env={**engine, "LOCUST_RUN_ID": "alt-recipe-1"},
    )
    results = results_under(tmp_path / "reports")
    assert results["errors"] == {} and results["account"]["entities"] > 0
    assert results["run"]["partition_target"] == 1234 and results["run"]["id"] == "alt-recipe-1"
    assert settings_given(results, conf_lines(ALT / conf)) == {}
    merged = tmp_path / "merged"
    container = ["--from-container", env["LOCUST_UPLOAD"], "--run-id", "alt-recipe-1", "--out", merged]
    run([installed / "bin" / "loadtest", "merge", *container], cwd=tmp_path, env=engine)
    assert json.loads((merged / "results.json").read_text())["attempts"] == results["attempts"]
    assert (merged / "report.html").is_file()


def test_the_kubernetes_recipe_runs_with_its_values_settings(installed, azurite, tmp_path):
    """values.yaml names the files it mounts, takes the connection string from a Secret, and its env runs."""
    values = yaml.safe_load((K8S / "values.yaml").read_text())
    loadtest = values["loadtest"]
    locustfile = ALT / loadtest["locust_locustfile"]  # one locustfile for both recipes: the ConfigMap is made from it
    assert f"--from-file={locustfile.relative_to(ROOT)}" in (K8S / "values.yaml").read_text()
    assert loadtest["environment_external_secret"] == {"partition-stress-target": ["AZURE_STORAGE_CONNECTION_STRING"]}
    env = {k: str(v) for k, v in loadtest["environment"].items()}
    assert all(k.startswith("LOCUST_") for k in env)
    run(
        [*locust(installed), "-f", locustfile, "--headless", "--out", tmp_path / "out"],
        cwd=tmp_path,
        env=clean_env(azurite, **{**env, **SHORT}),
    )
    results = results_under(tmp_path / "out")
    assert results["errors"] == {} and results["account"]["entities"] > 0
    tool = {k[len("LOCUST_") :].lower(): v for k, v in env.items() if k not in SHORT and k != "LOCUST_RUN_TIME"}
    assert settings_given(results, tool) == {}


def test_no_recipe_file_holds_a_secret():
    for path in (ROOT / "deploy").rglob("*"):
        if path.is_file() and path.suffix in (".py", ".yaml", ".conf", ".txt", ".md"):
            text = path.read_text()
            for secret in ("AccountKey=", "SharedAccessSignature=", "sig=", "Eby8vdM02x"):
                assert secret not in text, f"{path}: {secret}"
