"""The test table (the docs' steps 1 and 2): its lifecycle (``table``: a unique name, create, seed, read back, drop,
or in a reused table remove the run's own rows), its rows written fast and uncounted (``seeding``), who seeds a table
that engines share, once (``seeding_claim``), and the ledger of acknowledged writes checked against it after the run
(``integrity``)."""
