"""The transports under a user's table session (``--client``): what speaks HTTP to the Table service.

``base`` says what a transport does; ``rest`` is the lean REST transport (``--client fast``, the default) with its
sign-in (``auth``); ``sdk`` is azure-data-tables (``--client sdk``), the reference.
"""
