"""The session a user's ``self.table`` sends through: ``TableSession``, what each table operation sends and counts
(``table_session``), each one timed and fired as one Locust request event with its entities, attempts, throttled
attempts and lateness (``timed_requests``), over the transport ``--client`` names (the ``transports`` wing)."""
