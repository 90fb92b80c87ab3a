"""``loadtest ceiling``: steps of offered load until the partition gives way.

``plan`` sets the steps, ``judge`` judges them and names what limited the search (``remedies``: what can limit one,
and the remedy for each), ``shape`` runs them as Locust's ``LoadTestShape``.
"""
