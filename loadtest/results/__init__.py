"""The results form that every output renders from: the run's result (``form``: results.json and the series beside
it, "hottest" defined here) and its rows (``rows``), results.json's form declared once (``schema``, ``series_schema``,
``ceiling_schema``, ``advice_schema``), the per-second series as columns (``series_frame``; ``rolled_frame`` past a
day), the pure step from counts to figures (``summary``; each named key's folded counts added to its rows,
``whole_totals``), the ranges at both ends of the key order as one partition each
(``key_order``), an engine's whole count as ``loadtest merge`` adds it
(``mergeable``), a comparison of strategies (``comparison``), a run's seconds as findings and charts say them
(``wall_clock``), and the finding kinds' names and declarations (``finding_names``, ``finding_kinds``,
``checklist_kinds``), which the form holds and the findings wing raises."""
