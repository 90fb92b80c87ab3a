"""``loadtest traffic``: an account's own request logs (Azure Monitor's, archived or exported, or Storage Analytics')
read into a run's outputs: which partitions production ran hot, from the service's records of every request. The
sources read (``reader``: ``forms``, ``classic``, ``columns``, ``container``; one record, ``records``), tallied per
second (``tally``, ``attribution``, ``recent_ids``) in shards read apart (``shards``), into a traffic profile
(``profile_counts``) with the checklist's evidence (``workload``) that ``run --traffic`` replays (``run_replay``); the
command is ``traffic_command``."""
