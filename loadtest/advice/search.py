"""The smallest N of each family that fits, found by search over the simulator's demand, then the designs at the edge
run through the partition layer's model over the peak window; the cheapest that fits is the recommendation.

A design fits when its hottest partition (or the range where ordered new keys land) asks under ``HEADROOM`` of the
partition target at the peak x growth and the account asks under its target. The demand per key is closed form
(``designs.load_of``), so each probe costs one pass over the keys: N doubles until a design fits, then bisects; only
each family's answer (and the current design) is simulated, over ``WINDOW_S`` seconds at the peak x growth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime

from ..emulator.budgets import Budgets
from ..findings.remedies import HEADROOM
from ..options import rules
from ..progress import Progress
from ..results import summary
from ..results.form import Results, RunInfo
from ..simulator.simulation import Simulation
from .costs import Cost, cost_of
from .designs import FAMILIES, Design, Family, current_design, families_for
from .workload import Workload

__all__ = ["WINDOW_S", "Answer", "Search", "search", "simulated"]

#: Seconds of the peak the designs at the edge are simulated over (the peak window the verdict averages).
WINDOW_S = 10


@dataclass
class Answer:
    """A family's answer: the smallest design that fits (None: none up to its largest N, or the family cannot help),
    why not, the hottest ratio at each N probed (the chart's line), its cost and its simulated peak window."""

    family: str
    design: Design | None = None
    why_not: str = ""
    applies: bool = True  # False: the family cannot change this workload (``why_not`` says why); not searched
    curve: list[tuple[int, float]] = field(default_factory=list)
    cost: Cost | None = None
    simulated: dict[str, float | str] = field(default_factory=dict)


@dataclass
class Search:
    workload: Workload
    current: Design
    current_simulated: dict[str, float | str]
    answers: list[Answer]
    chosen: Answer | None
    runner_up: Answer | None
    account_over: bool
    results: Results  # the current design's peak window, simulated: what the report's figures show


def _probe(family: Family, fits: Callable[[Design], bool]) -> tuple[Design | None, list[tuple[int, float]]]:
    """Double N from the family's least until a design fits, then bisect: the smallest that fits, every probe."""
    probes: dict[int, Design] = {}

    def at(n: int) -> Design:
        if n not in probes:
            probes[n] = family.make(n)
        return probes[n]

    low, n = family.least - 1, family.least
    while n <= family.most and not fits(at(n)):
        low, n = n, n * 2
    if n > family.most:
        n = family.most
        if low >= n or not fits(at(n)):
            return None, _curve(probes)
    high = n
    while high - low > 1:
        mid = (low + high) // 2
        if fits(at(mid)):
            high = mid
        else:
            low = mid
    return at(high), _curve(probes)


def _curve(probes: dict[int, Design]) -> list[tuple[int, float]]:
    return sorted((n, round(d.load.hottest()[1], 3)) for n, d in probes.items())


def simulated(
    design: Design, workload: Workload, *, budgets: Budgets, rate: float, seconds: int = WINDOW_S, retry: str = ""
) -> Results:
    """``design`` through the partition layer's model at ``rate`` operations/s for ``seconds`` (``retry``: a strategy
    in place of the workload's): a simulation's results judged against the budgets given as the targets (so a scaled
    run's ratios are the full scale's). Where keys come and go (a traffic profile's), the seconds simulated are those
    its hottest key lived in."""
    assert design.demand is not None
    settings = workload.settings
    strategy = rules.retry("--retry", retry) if retry else settings.retry
    demand, lives_from = design.demand, 0
    if demand.lives is not None:
        hottest = design.load.hottest()[0]
        lives_from = int(demand.lives[demand.keys.index(hottest), 0]) if hottest in demand.keys else 0
    sim = Simulation(
        demand, budgets, strategy, rate=rate, seconds=seconds, step=0.1, seed=settings.key_seed, lives_from=lives_from
    )
    metrics = sim.run()
    info = RunInfo(
        id="advice",
        started=datetime.fromtimestamp(0, UTC).isoformat(timespec="seconds"),
        duration_s=float(seconds),
        target_kind="simulation",
        table="",
        seeded=settings.seed_entities,
        partition_target=round(budgets.partition_rate),
        account_target=round(budgets.account_rate),
        profile=settings.profile,
        simulated=True,
        entity_bytes=settings.shape.bytes,
        settings={
            **settings.public(),
            "arrival_rate": rate,
            "emulate_throttling": True,  # the model's budgets, as a simulation records them
            **{f"emulator_{name}": value for name, value in asdict(budgets).items()},
        },
    )
    return summary.build(metrics, info)


def hottest_figures(results: Results) -> dict[str, float | str]:
    """The hottest partition's level (demand over the target), served share and throttled share."""
    hottest = results.hottest()
    if not hottest:
        return {"partition": "", "ratio": 0.0, "served_share": 1.0, "throttled_share": 0.0}
    row = results.headline(hottest[0])
    peak, ratio = row.judged(results.open_loop)
    return {
        "partition": row.partition,
        "peak_eps": round(peak, 1),
        "ratio": round(ratio, 4),
        "served_share": round(row.entities / row.offered, 4) if row.offered else 1.0,
        "throttled_share": round(row.throttled / row.attempts, 4) if row.attempts else 0.0,
    }


def _answer(family: Family, workload: Workload, current: Design, budgets: Budgets, account_over: bool) -> Answer:
    """One family's answer: its smallest design that fits (probed), its cost and figures at the edge, or why none. A key
    design fits when its hottest partition is under ``HEADROOM`` of the target and, unless the account is over already
    as it is (then the accounts family answers for it), the account under its own: a design whose scans read more rows
    (a hash prefix's partitions hold more of the table than a time key's) may pass the account's target."""
    target, account_target = budgets.partition_rate, budgets.account_rate
    answer = Answer(family.name, why_not=family.why_not, applies=not family.why_not)
    if family.why_not:
        return answer
    if family.name == "accounts":
        fits = lambda d: d.load.account_eps < account_target  # noqa: E731 (partitions are each account's own)
    else:
        fits = lambda d: d.load.ratio(target) < HEADROOM and (account_over or d.load.account_eps < account_target)  # noqa: E731
    answer.design, answer.curve = _probe(family, fits)
    if answer.design is None:
        n, eps = answer.curve[-1] if answer.curve else (family.most, 0.0)
        last = family.make(n) if family.name != "accounts" else None
        if last is not None and eps < HEADROOM * target and not account_over:
            answer.why_not = (
                f"even at N = {n:,} the account asks {last.load.account_eps:,.0f} entities/s, over its "
                f"{account_target:,.0f}/s target"
            )
        elif family.name != "accounts":
            answer.why_not = (
                f"even at N = {n:,} its hottest partition asks {eps:,.0f} entities/s, {eps / target:.0%} of the "
                f"{target:,.0f}/s target"
            )
        else:
            answer.why_not = f"no N up to {family.most:,} fits"
        return answer
    answer.cost = cost_of(answer.design, current, workload)
    if family.name != "accounts":
        answer.simulated = hottest_figures(simulated(answer.design, workload, budgets=budgets, rate=workload.rate))
    return answer


def search(workload: Workload, wanted: tuple[str, ...]) -> Search:
    """Every wanted family's smallest fitting design, each at the edge simulated; the cheapest that fits chosen."""
    settings = workload.settings
    target, account_target = float(settings.partition_target), float(settings.account_target)
    budgets = Budgets(partition_rate=target, account_rate=account_target)
    current = current_design(workload)
    account_over = current.load.account_eps >= account_target
    answers = []
    families = list(families_for(workload, current, wanted))
    with Progress("advise: searching", len(families), "families") as progress:
        for family in families:
            answers.append(_answer(family, workload, current, budgets, account_over))
            progress.advance()
    results = simulated(current, workload, budgets=budgets, rate=workload.rate)
    current_fig = hottest_figures(results)
    keyed = sorted(
        (a for a in answers if a.design is not None and a.family != "accounts"),
        key=lambda a: (a.cost.score if a.cost else 0.0, FAMILY_ORDER[a.family], a.design.n if a.design else 0),
    )
    partitions_fit = current.load.ratio(target) < HEADROOM
    chosen: Answer | None
    runner_up: Answer | None
    if account_over:  # no key design helps: the accounts, and the best key design within each where partitions are hot
        chosen = next((a for a in answers if a.family == "accounts" and a.design is not None), None)
        runner_up = None if partitions_fit else (keyed[0] if keyed else None)
        if chosen is not None and chosen.design is not None and not partitions_fit:
            runner_up = _within_each(workload, chosen.design.n, wanted, budgets) or runner_up
    elif partitions_fit:
        chosen = Answer("current", design=current, cost=cost_of(current, current, workload), simulated=current_fig)
        runner_up = keyed[0] if keyed else None
    else:
        chosen = keyed[0] if keyed else None
        runner_up = keyed[1] if len(keyed) > 1 else None
    return Search(
        workload=workload,
        current=current,
        current_simulated=current_fig,
        answers=answers,
        chosen=chosen,
        runner_up=runner_up,
        account_over=account_over,
        results=results,
    )


def _within_each(workload: Workload, accounts: int, wanted: tuple[str, ...], budgets: Budgets) -> Answer | None:
    """The cheapest key design that fits each account's share of the workload (its peak over ``accounts``), searched on
    that share: the design "within each" is sized on what each account takes, not on the whole."""
    share = replace(workload, peak=workload.peak / accounts)
    current = current_design(share)
    found = [
        _answer(family, share, current, budgets, account_over=False)
        for family in families_for(share, current, tuple(f for f in wanted if f != "accounts"))
    ]
    keyed = sorted(
        (a for a in found if a.design is not None),
        key=lambda a: (a.cost.score if a.cost else 0.0, FAMILY_ORDER[a.family], a.design.n if a.design else 0),
    )
    return keyed[0] if keyed else None


FAMILY_ORDER = {name: i for i, name in enumerate(("current", *FAMILIES))}
