"""One run across engines (Azure Load Testing's, separate machines): each engine's outputs handed over through a blob
container (``blobs``), read and refused in the same words either way (``engine_read``), and merged into one run's
(``merge``: each results.json's whole count, ``results.mergeable``, then each engine's buckets added column by column,
``bucket_sum``, or streamed past a day, ``bucket_stream``; ``merge_workers`` in worker processes), with the engines'
load samples (``engine_load``) and request logs' shards (``logged``); ``loadtest merge`` is ``merge_command`` and
``loadtest cleanup`` is ``cleanup``."""
