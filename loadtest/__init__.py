"""partition-stress: find hot partitions in Azure Table Storage before production does.

A locustfile needs one import: taking a name from here also registers the tool's options and listeners with
Locust (``loadtest.plugin``)::

    from loadtest import TableUser

    class OrdersUser(TableUser):
        key_strategy = "hash-prefix:16"

The names load when first asked for, so ``loadtest report`` and the emulator stay light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ceiling.shape import CeilingShape
    from .lifecycle import register
    from .options.settings import Settings
    from .running.stress_run import StressRun, current_run
    from .running.users import HotPartitionUser, TableUser
    from .session.table_session import TableSession

__version__ = "0.1.0"

#: The public face: each name and the module it lives in.
_FACE = {
    "CeilingShape": "ceiling.shape",
    "HotPartitionUser": "running.users",
    "Settings": "options.settings",
    "StressRun": "running.stress_run",
    "TableSession": "session.table_session",
    "TableUser": "running.users",
    "current_run": "running.stress_run",
    "register": "lifecycle",
}

__all__ = [
    "CeilingShape",
    "HotPartitionUser",
    "Settings",
    "StressRun",
    "TableSession",
    "TableUser",
    "__version__",
    "current_run",
    "register",
]


def __getattr__(name: str) -> Any:
    if name not in _FACE:
        raise AttributeError(f"module 'loadtest' has no attribute {name!r}")
    import_module(".plugin", __name__)  # a locustfile taking a name from here gets the tool's options and listeners
    value = getattr(import_module(f".{_FACE[name]}", __name__), name)
    globals()[name] = value
    return value
