"""The findings wing: one detector per family (``levels``, ``demand``, ``throttling``, ``capacity``, ``losses``,
``ceiling``, ``checklist``) and ``assess``, one loop over them. Each kind is declared once beside the wing, in
``finding_kinds`` (which the results' form imports, so it stands below everything here).
"""
