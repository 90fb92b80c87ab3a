"""Running on Locust: ``TableUser`` and ``HotPartitionUser`` (``users``) with the mix's operations
(``mix_operations``), your user classes as they ran (``user_classes``), an open loop's operations in flight
(``in_flight``), this process's stress test, one per Locust environment (``stress_run``), the steps before the load
(``prepare``: reach the target, create and seed the table), master and workers (``distributed``), and what a stopped
test ran, as its results (``run_results``)."""
