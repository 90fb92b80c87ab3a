"""partition-stress's locustfile for engines that take a single file (Azure Load Testing, a Kubernetes ConfigMap).

The tool comes installed (the partition-stress wheel); this file loads its options and listeners and names the user.
For your own workload, replace ``HotPartitionUser`` with a subclass of ``TableUser``::

    class OrdersUser(TableUser):
        key_strategy = "hash-prefix:16"
        mix = {"read": 80, "upsert": 20}

Class attributes you set override the run's settings (locust.conf, ``LOCUST_*`` variables); unset ones take them.
"""

import loadtest.plugin  # noqa: F401  (registers the tool's options and listeners)
from loadtest.users import HotPartitionUser

__all__ = ["HotPartitionUser"]
