"""``loadtest simulate``: the workload at any scale through the partition layer's model, in virtual time.

``demand`` turns the workload (mix, key strategy, skew) into demand per key from their own probabilities;
``simulation`` runs it per tick through the emulator's model (``emulator.budgets``, the same bucket and range rules)
into a run's counts (``second_rows``), ``replay`` a traffic profile's seconds; ``simulate_command`` is the command: its
options' rules, the outputs a run writes, marked simulated.
"""
