"""The ``loadtest`` command line: its entry point (``entry``: gevent's patches first, for the commands that run
Locust), the parser and each command's start (``dispatch``), what Locust's own parser reads of a command line
(``locust_args``), and ``loadtest compare``'s runs, one per strategy (``compare``)."""
