"""``loadtest ceiling``'s locustfile: the tool's user under the ceiling search's shape.

Your own users under the search: import the shape in your locustfile beside them
(``from loadtest import CeilingShape, TableUser``).
"""

from __future__ import annotations

from loadtest import CeilingShape, HotPartitionUser

__all__ = ["CeilingShape", "HotPartitionUser"]
