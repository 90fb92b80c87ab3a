"""The house's map cannot go stale: every dotted ``module.name`` a docstring of the package names resolves to what it
names, and every wing says its job in its ``__init__`` docstring (docs/development.md's map is generated from them)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import FunctionType, ModuleType

import pytest

import loadtest

PACKAGE = Path(loadtest.__file__).parent
#: A reference: two or more dotted names between double backticks, a call's ``()`` allowed after it.
REFERENCE = re.compile(r"``([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?``")
#: Files named, not modules: ``results.json``, ``report.html``, ``loadtest/locustfile.py``.
FILE_ENDINGS = {"json", "html", "csv", "parquet", "kql", "py", "xml", "md", "yml", "yaml", "txt", "log", "j2", "jsonl",
                "toml", "sh", "js", "jsx", "xsd", "png", "gz", "whl", "conf"}  # fmt: skip
#: The names prose uses for what a function holds at run time, never modules: a user's ``self.table``, Locust's
#: ``environment.events.request``, a run's ``info.settings``, a frame's ``frame.attrs``; an example's class
#: (``OrdersUser.mix``, ``Class.attribute``); the service's own names (its JSON's ``odata.error``, Azure Monitor's
#: ``StorageTableLogs.ClientRequestId``).
PROSE = {"self", "environment", "env", "info", "user", "runner", "frame", "row", "run", "settings", "args",
         "ns", "parsed", "request", "response", "context", "stats", "opt", "event", "events", "series",
         "design", "page", "app", "web_ui", "parser", "namespace", "profile",
         "OrdersUser", "Class", "odata", "StorageTableLogs"}  # fmt: skip


def _modules() -> dict[str, ModuleType]:
    found = {"loadtest": loadtest}
    for info in pkgutil.walk_packages(loadtest.__path__, "loadtest."):
        if not info.name.endswith("__main__"):
            found[info.name] = importlib.import_module(info.name)
    return found


MODULES = _modules()
#: The classes and functions the package defines, by name: a reference may start at one (``Operation.demand``).
DEFINED = {
    name: value
    for module in MODULES.values()
    for name, value in vars(module).items()
    if isinstance(value, type | FunctionType) and value.__module__ == module.__name__
}


def _docstrings(module: ModuleType) -> list[str]:
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef))]
    return [doc for node in nodes if (doc := ast.get_docstring(node))]


def _attribute(holder: object, name: str) -> object | None:
    """``holder.name``: an attribute, a dataclass's field or a TypedDict's key, what a class's methods set on
    ``self``, a module of a package."""
    if hasattr(holder, name):
        return getattr(holder, name)
    if name in getattr(holder, "__dataclass_fields__", {}) or name in getattr(holder, "__annotations__", {}):
        return object()
    if isinstance(holder, type) and name in re.findall(r"self\.(\w+)(?=\s*[,:=])", inspect.getsource(holder)):
        return object()
    if isinstance(holder, ModuleType) and f"{holder.__name__}.{name}" in MODULES:
        return MODULES[f"{holder.__name__}.{name}"]
    return None


def _resolves(reference: str, home: ModuleType) -> bool:
    """A reference resolves from where it is written: its head is a module of the package (by its full name, or the
    end of it, ``budgets`` or ``emulator.budgets``), a name the writing module holds, or a library's module; then each
    name after it is an attribute of the one before."""
    parts = reference.split(".")
    starts: list[tuple[object, list[str]]] = []
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        for name, module in MODULES.items():
            if name == head or name.endswith(f".{head}"):
                starts.append((module, parts[cut:]))
    if hasattr(home, parts[0]):
        starts.append((getattr(home, parts[0]), parts[1:]))
    if parts[0] in DEFINED:
        starts.append((DEFINED[parts[0]], parts[1:]))
    try:
        starts.append((importlib.import_module(parts[0]), parts[1:]))
    except ImportError:
        pass
    for holder, rest in starts:
        for name in rest:
            holder = _attribute(holder, name)
            if holder is None:
                break
        else:
            return True
    return False


def _checked(reference: str) -> bool:
    head, *_, last = reference.split(".")
    return last not in FILE_ENDINGS and head not in PROSE and not reference.startswith("loadtest.TableUser")


def test_every_dotted_reference_in_the_packages_docstrings_names_what_is_there():
    stale = [
        f"{name}: ``{reference}``"
        for name, module in MODULES.items()
        for doc in _docstrings(module)
        for reference in REFERENCE.findall(doc)
        if _checked(reference) and not _resolves(reference, module)
    ]
    assert not stale, "docstrings name what is not there:\n" + "\n".join(sorted(set(stale)))


def test_the_reference_check_fails_on_a_name_that_moved_or_never_was():
    home = MODULES["loadtest.emulator.throttle"]
    assert _resolves("budgets.Budgets", home) and _resolves("emulator.budgets.Budgets.burst", home)
    assert _resolves("Budget.has", home)  # a name the writing module imports
    assert _resolves("Throttle.partitions", home) and not _resolves("Throttle.spent", home)  # what __init__ sets on self
    assert _resolves("locust.events", home) and _resolves("counting.counts", home)
    assert not _resolves("errors.is_throttling", home)  # a module renamed
    assert not _resolves("budgets.Bucket", home) and not _resolves("budgets.Budgets.nothing", home)


def test_the_top_level_keeps_the_public_face_and_the_ground_floor_and_every_wing_says_its_job():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top) <= 15, top
    wings = [p.parent for p in PACKAGE.glob("*/__init__.py")]
    assert wings
    for wing in wings:
        doc = MODULES[f"loadtest.{wing.name}"].__doc__
        assert doc and len(doc.split()) >= 8, f"loadtest/{wing.name}/__init__.py says no job"


@pytest.mark.parametrize("wing", sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")))
def test_each_module_of_a_wing_is_named_in_its_wings_docstring(wing):
    doc = MODULES[f"loadtest.{wing}"].__doc__ or ""
    modules = sorted(p.stem for p in (PACKAGE / wing).glob("*.py") if p.stem != "__init__")
    unnamed = [m for m in modules if f"``{m}``" not in doc and f"``{wing}.{m}``" not in doc]
    assert not unnamed, f"loadtest/{wing}/__init__.py does not name {unnamed}"
