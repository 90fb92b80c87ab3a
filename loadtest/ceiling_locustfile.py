"""``loadtest ceiling``'s locustfile: the tool's user under the ceiling search's shape.

Your own users under the search: import the shape in your locustfile (``from loadtest.ceiling_shape import
CeilingShape``), beside ``import loadtest.plugin``.
"""

from __future__ import annotations

import loadtest.plugin  # noqa: F401  (registers the options and listeners)
from loadtest.ceiling_shape import CeilingShape
from loadtest.users import HotPartitionUser

__all__ = ["CeilingShape", "HotPartitionUser"]
