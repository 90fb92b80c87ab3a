"""An open loop that stays open: each due operation runs in a greenlet of its own.

A user that waited for each answer (and sat through each retry's backoff) before starting its next
operation would drop its schedule's slots meanwhile: under throttling with exponential retries a run
sent 39 % of its schedule. Production's clients retry independently, so the partition receives the
whole demand plus its retries. Here a user only keeps the schedule: at each due time it hands the
operation to a *lane* (a table session with a connection of its own, reused once free) and goes back
to waiting for the next slot, as Gatling's open model gives every arrival its own virtual user.

In-flight operations are bounded per process by ``--max-in-flight`` (each holds a greenlet and a
keep-alive connection: memory and open files set the bound, not the schedule). When the bound is
reached, the user waits for a lane; the slots it misses meanwhile are dropped and counted, and the
run names the concurrency its schedule needed (Little's law: arrival rate x mean time in flight).
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

import gevent
from gevent import Greenlet, getcurrent
from gevent.lock import Semaphore
from locust.env import Environment
from locust.exception import RescheduleTask, RescheduleTaskImmediately, StopUser

from ..limits import DEFAULT_MAX_IN_FLIGHT
from ..session.table_session import TableSession

__all__ = ["INTERRUPTED_FINISH_S", "InFlight", "Lanes"]

#: Interrupted (Ctrl-C, SIGTERM), a user's operations in flight get this long to finish, not the stop timeout: a
#: saturated open loop may hold thousands, each waiting seconds, and the run must end within 5 s, its outputs written.
INTERRUPTED_FINISH_S = 1.0

log = logging.getLogger("loadtest")


class InFlight:
    """This process's operations in flight: the bound, and what each second saw (for the per-second samples)."""

    def __init__(self, cap: int = DEFAULT_MAX_IN_FLIGHT) -> None:
        self.resize(cap)

    def resize(self, cap: int) -> None:
        """A new bound (at a test's start, from its settings), with the counts of the seconds to come."""
        self.cap = cap
        self._free = Semaphore(cap)
        self.now = self.peak = 0
        self.capped = 0  # slots that found every lane of the process busy and waited for one
        self.held_s = 0.0  # time in flight of the operations finished since the last sample...
        self.done = 0  # ...and how many

    def acquire(self) -> None:
        """Take a place in flight, waiting for one when all ``cap`` are taken (counted)."""
        if self._free.locked():
            self.capped += 1
        self._free.acquire()
        self.now += 1
        self.peak = max(self.peak, self.now)

    def release(self, held_s: float) -> None:
        self.now -= 1
        self.held_s += held_s
        self.done += 1
        self._free.release()

    def sample(self) -> dict[str, float]:
        """The last second's figures (then counted afresh): the most in flight, the bound, the slots that waited for
        a lane, and the operations finished with their time in flight."""
        sample = {
            "in_flight": self.peak,
            "cap": self.cap,
            "capped": self.capped,
            "held_s": round(self.held_s, 4),
            "done": self.done,
        }
        self.peak, self.capped, self.held_s, self.done = self.now, 0, 0.0, 0
        return sample


class Lanes:
    """One user's operations in flight, each on a table session of its own (taken from the idle ones or made)."""

    def __init__(self, environment: Environment, in_flight: InFlight, make: Callable[[int], TableSession]) -> None:
        self.environment, self.in_flight, self._make = environment, in_flight, make
        self._idle: list[TableSession] = []
        self._made = 0
        self.by_greenlet: dict[Greenlet, TableSession] = {}  # the session each running operation uses

    def session(self) -> TableSession | None:
        """The session of the operation running in this greenlet (None outside one)."""
        return self.by_greenlet.get(getcurrent())

    def dispatch(self, task: Callable[[Any], None], user: Any, intended: float, dropped: int) -> None:
        """Start ``task`` for ``user`` now, in a greenlet of its own, timed from ``intended`` (when it was due)."""
        self.in_flight.acquire()
        if self._idle:
            session = self._idle.pop()
        else:
            self._made += 1
            session = self._make(self._made)
        session.intended, session.dropped = intended, dropped
        greenlet = Greenlet(self._run, task, user, session, time.time())
        self.by_greenlet[greenlet] = session
        greenlet.start()

    def _run(self, task: Callable[[Any], None], user: Any, session: TableSession, started: float) -> None:
        try:
            task(user)
        except (RescheduleTask, RescheduleTaskImmediately, StopUser, gevent.GreenletExit):
            pass
        except Exception as err:  # as Locust's task loop handles a task's exception: counted, logged, carried on
            self.environment.events.user_error.fire(user_instance=user, exception=err, tb=err.__traceback__)
            if self.environment.catch_exceptions:
                log.error("%s\n%s", err, traceback.format_exc())
            else:
                raise
        finally:
            del self.by_greenlet[getcurrent()]
            session.intended = None
            self._idle.append(session)
            self.in_flight.release(time.time() - started)  # its lane's time: retries and backoffs included

    def finish(self, timeout: float) -> None:
        """At the user's stop: let the operations in flight finish (their answers count), up to ``timeout`` seconds,
        then stop the rest; close every session."""
        running = list(self.by_greenlet)
        try:
            if running:
                gevent.joinall(running, timeout=timeout)
        finally:
            gevent.killall(list(self.by_greenlet), block=True, timeout=1.0)
            for session in self._idle:
                session.close()
            self._idle.clear()
