"""``loadtest advise``'s own options: the growth the design must hold, the workload's source (``--from``), the
families searched and the proof on a real table (``--verify``). The workload, its peak and the budgets are a
simulation's options; a profile's are the replay's."""

from __future__ import annotations

from . import rules
from .option import Option, only
from .values import duration, number, switch

__all__ = ["ADVISE_OPTIONS"]

#: ``loadtest advise``'s own (the workload, its peak and the budgets are a simulation's; a profile's replay options).
ADVISE_OPTIONS: tuple[Option, ...] = only(
    "advise",
    (
        Option(
            ("--growth",),
            "how much more than the peak the design must hold: 2 is twice the peak",
            2.0,
            number("a multiple above 0 and at most 1000, e.g. 2 or 1.5", lambda n: 0 < n <= 1000),
            locust=False,
        ),
        Option(
            ("--from",),
            "a finished run's or simulation's results.json: the workload its settings recorded, at its peak",
            "",
            locust=False,
        ),
        Option(
            ("--families",),
            f"the design families to search, comma list: {','.join(rules.DESIGN_FAMILIES)}",
            ",".join(rules.DESIGN_FAMILIES),
            rules.families,
            blank=True,  # an empty list is refused, not the default
            locust=False,
        ),
        Option(
            ("--verify",),
            "run the current and the recommended design for real through the throttling emulator on a fresh embedded "
            "Azurite, scaled to --verify-rate with the budgets scaled alike, beside the simulation of the same",
            False,
            switch,
            locust=False,
        ),
        Option(
            ("--verify-rate",),
            "operations/s each verifying run sends (the scale: this over the peak x growth)",
            200.0,
            number("operations/s above 0 and at most 2000, e.g. 200", lambda n: 0 < n <= 2000),
            locust=False,
        ),
        Option(
            ("--verify-time",),
            "how long each verifying run loads: 20s, 1m (its first second is left out of the comparison)",
            "20s",
            duration(maximum=600, minimum=3, why="at least 3 s: the first is left out, and the last is cut short"),
            locust=False,
        ),
    ),
)
