"""One run across engines (Azure Load Testing's, separate machines): each engine's whole count in its results.json
(``mergeable``), its outputs handed over through a blob container (``blobs``), and the engines' results merged into
one run's (``merge``; ``loadtest merge`` is ``command``)."""
