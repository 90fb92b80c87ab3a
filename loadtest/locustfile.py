"""The ``locust -f loadtest/locustfile.py`` entry: the tool's options and listeners, and its user.

``loadtest run`` runs this same file through Locust's own runner. For your own users, write
a locustfile that imports ``loadtest.plugin`` and subclasses ``loadtest.users.TableUser``.
"""

from __future__ import annotations

import loadtest.plugin  # noqa: F401  (registers the options and listeners)
from loadtest.users import HotPartitionUser

__all__ = ["HotPartitionUser"]
