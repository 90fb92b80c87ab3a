"""The throttling emulator: Azure's answers over its targets, in front of Azurite (which never throttles).

``budgets`` is the model (token buckets per PartitionKey and account, range partitions split and moved), ``throttle``
its decisions on requests, ``queries`` what a query costs (the rows it scans, where it read them), ``relay`` the proxy
on the wire, ``request_log`` what it relays written as Storage Analytics' records, ``process`` the child process the
tool starts.
"""
