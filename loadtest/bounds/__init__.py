"""What bounded a run's figures besides the design, each measured, never inferred: who ran out of CPU (``cpu``), a
served pace that gave way (``served_pace``: an emulator saturated, Azurite slowing as its table grew), the seconds the
figures cover (``run_span``: a ramp, a lost target), the share of an open loop's schedule sent (``schedule``), and
what judged a throttled attempt (``throttlers``). Pure questions of the results; the ``findings`` wing and the
ceiling's judgement word the answers.
"""
