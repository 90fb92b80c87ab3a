"""``loadtest advise``: the key design that fits a workload. The workload (``workload``) as the simulator's demand,
the designs the Azure docs name sized by search (``designs``, ``search``), what each costs the application's own
operations (``costs``), the key function as code (``code``), the proof on a real table (``verify``), results.json's
section and the console's lines (``section``), the command and its outputs (``advise_command``)."""
