"""Locust users that drive a PartitionKey design with a weighted mix of table operations, or with tasks of your own.

Subclass ``TableUser`` to describe your own workload; class attributes left at ``None``
take the run's settings (command line, web UI form or environment)::

    class OrdersUser(TableUser):
        key_strategy = "hash-prefix:16"
        skew = "zipfian:0.9"
        mix = {"read": 80, "upsert": 20}
        wait_time = constant_throughput(10)   # a fixed offered load per user
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from itertools import accumulate
from types import MethodType
from typing import Any, ClassVar

from locust import User, constant, constant_throughput, task
from locust.env import Environment

from ..ceiling.shape import CeilingShape
from ..options.settings import Settings
from ..report.server_logs import request_id_prefix
from ..service.operations import OPERATIONS
from ..session.table_session import TableSession
from ..testbed.integrity import user_row_prefix
from ..workload.arrivals import Schedule
from ..workload.key_specs import row_key_maker
from .in_flight import INTERRUPTED_FINISH_S, Lanes
from .mix_operations import PERFORMERS, MixOperations
from .stress_run import current_run

__all__ = ["TableUser", "HotPartitionUser"]


class TableUser(MixOperations, User):
    """An abstract user aimed at the run's test table, with a PartitionKey design.

    Class attributes (``None`` = the run's setting):

    - ``key_strategy``: ``single`` (``partition_key``), ``set:N``, ``hash-prefix:N``, ``guid``,
      ``append-only``, ``prepend-only``, ``timestamp:FORMAT``, ``template:TEXT``.
    - ``row_key_strategy``: RowKeys of new entities (``sequential``, ``guid``, ``append-only``…).
    - ``skew``: how accesses spread over the keys: ``uniform``, ``zipfian[:theta]``, ``hotspot:OPS,KEYS``.
    - ``mix``: operation -> weight (see ``loadtest.service.operations.OPERATIONS``).
    - ``batch_size``, ``batch_mix``: operations per entity group transaction, and their kinds.
    - ``scan_size``: rows a scan asks for.
    - ``wait_time``: Locust's; the default ``constant(0)`` is a closed loop (as fast as the
      service answers); ``constant_throughput(n)`` fixes the offered load.

    Every attribute is judged before anything is created, as its option is (``OrdersUser.mix`` named in the
    error). A name the tool and Locust do not read is refused as the misspelling it likely is (``key_stratgy``):
    attributes of your own start with ``_``, are in CAPITALS, or are listed in ``own_attributes``.

    Reads, updates and scans address seeded entities; inserts and batches write new ones;
    deletes remove entities the user inserted itself (and insert one when it has none yet).

    Your own ``@task`` methods replace the mix: ``self.table`` has every operation and
    ``query(filter, parameters=, select=, top=, name=)``; ``existing()``, ``new_keys()`` and
    ``entity()`` give keys and entities the run seeded or will write.
    """

    abstract = True
    wait_time = constant(0)

    partition_key: ClassVar[str | None] = None
    key_strategy: ClassVar[str | None] = None
    row_key_strategy: ClassVar[str | None] = None
    skew: ClassVar[str | None] = None
    mix: ClassVar[dict[str, int] | None] = None
    batch_size: ClassVar[int | None] = None
    batch_mix: ClassVar[dict[str, int] | None] = None
    scan_size: ClassVar[int | None] = None
    own_attributes: ClassVar[tuple[str, ...]] = ()  # attributes of your own, besides _private and CONSTANTS

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        run = current_run(environment)
        settings = run.settings.for_class(type(self))  # its class attributes over the run's settings
        # every user of the whole run its own repeatable stream: this process's worker index, then its user number
        stream = f"{environment.runner.worker_index}.{next(run.streams)}"
        if settings.run_id:  # engines of one run: each its own streams (GUIDs, accesses) too
            stream = f"{settings.engine}:{stream}"
        rows = run.table.rows  # in a reused or shared table, every RowKey the run writes starts with it
        self.keys = settings.keys(stream=stream, rows=run.table.seeded_prefix)
        self.rng = random.Random(f"{settings.key_seed}:user:{stream}")
        self._ops = [getattr(self, PERFORMERS[name]) for name in settings.mix]
        self._operations = [OPERATIONS[name] for name in settings.mix]
        self._cum_weights = list(accumulate(settings.mix.values()))
        self._aim = getattr(self.keys, "aim", None)  # a profile's keys: drawn by the op class of the operation to run
        self._keep_books(settings)
        self.settings = settings
        self._metrics = run.metrics  # its ``stopped``: when the users were asked to stop, the schedule's end
        self._schedule: Schedule | None = None
        self._lanes: Lanes | None = None
        self._due: float | None = None  # open loop: when the next slot is due, once its wait is over
        self._dropped = 0  # and how many slots were dropped before it
        shape = environment.shape_class
        if isinstance(shape, CeilingShape):  # the search sets the offered load: each user its share, open loop
            self._open_loop(settings, stream, shape.plan_for(environment.parsed_options).user_rate)
        elif type(self).wait_time is TableUser.wait_time:  # a class's own wait_time wins
            if settings.rate > 0:
                self.wait_time = MethodType(constant_throughput(settings.rate), self)  # a fixed offered load
            elif settings.arrival_rate > 0:  # the run's arrivals, spread over its users: this user's share
                self._open_loop(settings, stream, settings.arrival_rate / max(1, run.users))
        self._seeded = max(1, run.seeded)
        prefix = user_row_prefix(environment.runner.worker_index)  # names its worker (integrity)
        self._new_row = row_key_maker(settings.row_key_strategy, prefix=prefix, rows=rows, seed=stream)
        ids = f"{request_id_prefix(run.run_id)}{stream}."

        def session(lane: int = 0) -> TableSession:
            """A table session: the user's own (lane 0), or one more for an open loop's operations in flight, each
            with a connection, retry stream and request ids of its own (``<run-id>-<stream>.l<lane>.<n>``)."""
            return TableSession(
                target=run.target,
                table=run.table.name,
                request_event=environment.events.request,
                retry=settings.retry,
                seed=f"{settings.key_seed}:retry:{stream}" + (f".{lane}" if lane else ""),
                client=settings.client,
                request_ids=ids + (f"l{lane}." if lane else ""),
                client_id=ids,
                names=_names(environment, type(self)),
                keys=self.keys,
                seeded=run.seeded,
            )

        self._table = session()
        if self._schedule is not None:  # open loop: each due operation in flight on a lane of its own
            self._lanes = Lanes(environment, run.in_flight, session)
            self.tasks = [self._dispatching(t) for t in type(self).tasks]

    @property
    def table(self) -> TableSession:
        """This user's table client (in an open loop, the one of the operation running now)."""
        lanes = self._lanes
        return self._table if lanes is None else lanes.session() or self._table

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class with tasks of its own runs those instead of the mix (a task may call ``self.one_operation()``)."""
        super().__init_subclass__(**kwargs)
        own = [t for t in cls.tasks if t is not TableUser.one_operation]
        if own:
            cls.tasks = own

    def on_stop(self) -> None:
        if self._schedule is not None:  # slots due before the end and never sent are demand too
            self._unsent(self._schedule.owed(time.time()))
        if self._lanes is not None:  # operations in flight finish (their answers count), within the stop timeout
            interrupted = current_run(self.environment).interrupted
            self._lanes.finish(timeout=INTERRUPTED_FINISH_S if interrupted else self.environment.stop_timeout or 0)
        self._table.close()

    @task
    def one_operation(self) -> None:
        """One operation drawn from the mix (``mix``, ``--mix``)."""
        if self._aim is None:
            self.rng.choices(self._ops, cum_weights=self._cum_weights)[0]()
            return
        i = self.rng.choices(range(len(self._ops)), cum_weights=self._cum_weights)[0]
        self._aim(self._operations[i].op_class)
        self._ops[i]()

    def _open_loop(self, settings: Settings, stream: str, rate: float) -> None:
        """Operations due at ``rate`` per second on this user's own schedule, whatever the service's pace."""
        rng = random.Random(f"{settings.key_seed}:arrivals:{stream}")
        self._schedule = Schedule(rate, settings.arrivals, rng, time.time())
        self.wait_time = self._when_due

    def _when_due(self) -> float:
        """Open loop: seconds until the next slot is due (then dispatched), and the slots dropped before it (overdue
        while every lane was busy or the process was late), each with its demand drawn as if it had been sent."""
        now = time.time()
        self._due, dropped = self._schedule.take(now)
        if dropped:
            self._dropped += len(dropped)
            self._unsent(dropped)
        return max(0.0, self._due - now)

    def _dispatching(self, task: Any) -> Callable[[TableUser], None]:
        """Locust's task loop, open: running a task starts it on a lane and returns at once (nothing before the
        first slot is due); the loop's wait is the schedule's."""
        if isinstance(task, type):  # a nested TaskSet runs as Locust runs it
            task = lambda user, taskset=task: taskset(user).run()  # noqa: E731

        def dispatch(user: TableUser) -> None:
            if user._due is not None:
                due, dropped, user._due, user._dropped = user._due, user._dropped, None, 0
                if not user._past_the_end(due):
                    user._lanes.dispatch(task, user, due, dropped)

        return dispatch

    def _past_the_end(self, due: float) -> bool:
        """Whether a slot falls due after the users were asked to stop: neither sent nor owed. A process busy at the
        stop (a CPU-bound machine) reaches its users' next wait or ``on_stop`` late; the schedule ended when asked."""
        stopped = self._metrics.stopped
        return stopped is not None and due >= stopped

    def _unsent(self, slots: list[float]) -> None:
        """Fire the demand of slots never sent (``events.unsent``), when the user runs the mix: what each would have
        done is known. Slots due after the stop are no demand of the run's."""
        slots = [due for due in slots if not self._past_the_end(due)]
        fire = getattr(self.environment.events, "unsent", None)
        if slots and fire is not None and type(self).tasks == [TableUser.one_operation]:
            fire.fire(demand=[demand for due in slots for demand in self._demand(int(due))])

    def _demand(self, second: int) -> list[tuple[int, str, str, int]]:
        """A slot's (second, partition, op class, entities) as its operation would have asked, drawn without a request."""
        op = self.rng.choices(self._operations, cum_weights=self._cum_weights)[0]
        if self._aim is not None:
            self._aim(op.op_class)
        pk = self.keys.new_partition() if op.new_keys else self.existing()[0]
        scan = self.settings.scan_size
        scan_rows = self.keys.scanned(pk, self._seeded, scan)[1] if op.reach == "range" else scan
        return [(second, pk, op_class, n) for op_class, n in op.demand(batch_size=self.settings.batch_size, scan_rows=scan_rows)]

    # --- for your own tasks ---------------------------------------------------------------

    def existing(self) -> tuple[str, str]:
        """(PartitionKey, RowKey) of a seeded entity, chosen by the class's key strategy and skew."""
        return self.keys.existing(self._seeded)

    def new_keys(self) -> tuple[str, str]:
        """(PartitionKey, RowKey) for a new entity: the key strategy's next key, a RowKey of this user's own."""
        return self.keys.new_partition(), self._new_row()

    def entity(self, pk: str, rk: str) -> dict[str, Any]:
        """An entity of the run's shape (``--entity-size``, ``--properties``) under these keys."""
        return self.settings.shape.entity(pk, rk, self.rng.randrange(100))


def _names(environment: Environment, user_class: type) -> str:
    """With several table user classes in a run, each one's requests carry its name (``OrdersUser: GET point read``)."""
    table_classes = [cls for cls in environment.user_classes if issubclass(cls, TableUser)]
    return f"{user_class.__name__}: " if len(table_classes) > 1 else ""


class HotPartitionUser(TableUser):
    """The run's key strategy (by default one PartitionKey: the docs' single-partition stress test)."""
