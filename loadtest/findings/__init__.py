"""The findings wing: what a run's figures mean, one detector per family (``levels`` HOT/WARM/COOL, ``spread`` KEY_SKEW,
``open_loop`` UNSERVED/UNSENT, ``throttling`` THROTTLED, ``errors`` ERRORS, ``capacity`` what bounded the figures,
``losses`` and ``outages`` what was lost (production's records over their own seconds: ``log_outages``), ``ceiling`` a
search's outcome, ``checklist`` the docs' performance checklist) on what every detector shares (``common``), the
remedies that follow their causes (``remedies``), the one order they are listed in (``order``), and ``assess``, one
loop over them with ``--fail-on``'s checks and the exit code; ``examples`` words one of each kind. Each kind is
declared once below the wing, in ``results.finding_kinds`` (the results' form holds it).
"""
