"""``loadtest ceiling``: steps of offered load until the partition gives way.

``plan`` sets the steps, ``judge`` judges them and names what limited the search, ``shape`` runs them as
Locust's ``LoadTestShape``.
"""
