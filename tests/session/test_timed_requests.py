"""An operation timed and fired as one request event: its attempts, throttled attempts by reason, backoff, the first
attempt's latency and an open loop's lateness, from what the transport reports (synthetic answers, nothing sent)."""

import time

from synthetic import environment

from loadtest.service.error_codes import ServiceError
from loadtest.service.operations import OPERATIONS
from loadtest.session.timed_requests import TimedRequests

READ, INSERT = OPERATIONS["read"], OPERATIONS["insert"]


class RequestIds:
    """All a transport is told by the timing: each operation's request id."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def set_request_id(self, request_id: str) -> None:
        self.ids.append(request_id)


def timed(**kw) -> tuple[TimedRequests, list[dict]]:
    env = environment()
    events: list[dict] = []
    env.events.request.add_listener(lambda **event: events.append(event))
    timing = TimedRequests(request_event=env.events.request, **kw)
    timing.transport = RequestIds()
    return timing, events


def test_throttled_attempts_are_counted_by_reason_with_the_backoff_and_the_first_attempts_latency():
    timing, events = timed(request_ids="run-0.", names="OrdersUser: ")

    def answered_third_time() -> str:  # the transport's reports: two throttled answers, a wait after each, the row
        timing.on_attempt(503, "ServerBusy", "Operations per second is over the account limit.")
        timing.on_backoff(0.25)
        timing.on_attempt(500, "OperationTimedOut")
        timing.on_backoff(0.5)
        timing.on_attempt(200, None)
        return "row"

    assert timing._run(READ, "hot", 1, answered_third_time) == "row"
    (event,) = events
    context = event["context"]
    assert (context["attempts"], context["throttled"], context["throttled_by"]) == (3, 2, {"account": 1, "timeout": 1})
    assert context["backoff_s"] == 0.75 and context["first_ms"] <= event["response_time"]
    assert event["name"] == f"OrdersUser: {READ.request_name}" and event["exception"] is None
    assert context["partition"] == "hot" and "late_ms" not in context
    timing._run(READ, "hot", 1, lambda: timing.on_attempt(200, None))  # the next operation starts its counts afresh
    assert events[-1]["context"]["attempts"] == 1 and events[-1]["context"]["throttled"] == 0
    assert "throttled_by" not in events[-1]["context"]
    assert timing.transport.ids == ["run-0.1", "run-0.2"]


def test_an_operation_due_earlier_carries_how_late_it_started_and_the_slots_dropped_before_it():
    timing, events = timed()
    timing.intended, timing.dropped = time.time() - 2.0, 3
    timing._run(INSERT, "hot", 1, lambda: True)
    assert events[-1]["context"]["late_ms"] >= 2000.0 and events[-1]["context"]["dropped"] == 3
    assert timing.intended is None and timing.dropped == 0  # told once: the next operation is not late
    timing._run(INSERT, "hot", 1, lambda: True)
    assert "late_ms" not in events[-1]["context"] and "dropped" not in events[-1]["context"]


def test_an_insert_whose_retry_met_its_own_first_attempt_succeeded_and_other_failures_keep_their_code():
    timing, events = timed()

    def answer_lost() -> None:  # the first attempt landed, its answer did not: the retry finds the entity
        timing.on_attempt(503, "ServerBusy")
        timing.on_backoff(0.0)
        raise ServiceError("EntityAlreadyExists", 409)

    assert timing._run(INSERT, "hot", 1, answer_lost) is None
    assert events[-1]["exception"] is None and events[-1]["context"]["succeeded_earlier"] == 1

    def taken() -> None:
        raise ServiceError("EntityAlreadyExists", 409)

    assert timing._run(INSERT, "hot", 1, taken) is None
    assert events[-1]["exception"].code == "EntityAlreadyExists"
    assert events[-1]["context"]["error_code"] == "EntityAlreadyExists" and "succeeded_earlier" not in events[-1]["context"]


def test_a_delete_whose_retry_found_its_entity_gone_succeeded_earlier_and_its_entity_is_no_lost_write():
    """Issue #64: Azurite frozen mid-run, "LOST_WRITES 1 of 1,685 acknowledged writes are not in the table" beside a
    DELETE's ResourceNotFound: its timed-out attempt had been applied and its retry got 404. As an insert's 409 after
    a landed attempt, the delete succeeded earlier; its entity is deleted in the ledger, not lost from the table."""
    from loadtest.testbed.integrity import Ledger, verify

    timing, events = timed()
    ledger = Ledger.register(timing_env := environment())
    timing._fire = lambda **event: (events.append(event), timing_env.events.request.fire(**event))  # to the ledger too
    ledger.created.add(("hot", "u1"))
    delete = OPERATIONS["delete"]

    def answer_lost() -> None:  # the first attempt landed as the target froze; its retry finds nothing to delete
        timing.on_attempt(500, "OperationTimedOut")
        timing.on_backoff(0.0)
        raise ServiceError("ResourceNotFound", 404)

    assert timing._run(delete, "hot", 1, answer_lost, written=(("delete", "hot", "u1"),)) is None
    assert events[-1]["exception"] is None and events[-1]["context"]["succeeded_earlier"] == 1
    assert verify(ledger, set())["lost"] == 0 and ledger.deleted == {("hot", "u1")}

    def never_there() -> None:  # a first attempt's 404: the entity was not there, a failure of its own
        raise ServiceError("ResourceNotFound", 404)

    timing._run(delete, "hot", 1, never_there, written=(("delete", "hot", "u2"),))
    assert events[-1]["exception"].code == "ResourceNotFound" and "succeeded_earlier" not in events[-1]["context"]
