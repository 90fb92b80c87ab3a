"""Counting a run as it goes, plain, without Locust's own statistics: the request listener (``request_listener``) counts
each request event into one second's buckets per partition and op class (``buckets``, ``counts``: snapshot, drain,
merge, compaction; each key's folded seconds summed apart, ``folded_totals``) with latency in HdrHistogram's encoding
(``histograms``, ``latency``: per second, rolled into minutes as they age); the seconds behind the recent window are
put away as compressed columns (``aged_buckets``) with each partition's busiest ten seconds (``aged_peaks``); read
back as frames (``bucket_frame``) and phases (``phases``); where each second's keys fall at the ends of the key
order, read before untracked keys fold (``key_edges``). Beside them the checklist's per-request evidence
(``request_evidence``) and the generator's own CPU (``generator_cpu``)."""
