"""partition-stress's locustfile for engines that take a single file (Azure Load Testing, a Kubernetes ConfigMap).

The tool comes installed (the partition-stress wheel); importing from ``loadtest`` registers its options and
listeners, and this file names the user. For your own workload, replace ``HotPartitionUser`` with a subclass of
``TableUser`` (``from loadtest import TableUser``)::

    class OrdersUser(TableUser):
        key_strategy = "hash-prefix:16"
        mix = {"read": 80, "upsert": 20}

Class attributes you set override the run's settings (locust.conf, ``LOCUST_*`` variables); unset ones take them.
"""

from loadtest import HotPartitionUser  # also registers the tool's options and listeners

__all__ = ["HotPartitionUser"]
