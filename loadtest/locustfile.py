"""The ``locust -f loadtest/locustfile.py`` entry: the tool's user, with its options and listeners.

``loadtest run`` runs this same file through Locust's own runner. For your own users, write a locustfile that
subclasses ``loadtest.TableUser`` (``from loadtest import TableUser``: that import registers the options too).
"""

from __future__ import annotations

from loadtest import HotPartitionUser

__all__ = ["HotPartitionUser"]
