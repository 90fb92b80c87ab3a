"""The azure-data-tables transport (``--client sdk``): the latencies an application sees through the
SDK, and the reference the lean REST client is tested against.

The SDK silently ignores ``retry_policy=``; ``with_policies`` swaps ``StrategyRetryPolicy`` into the
client's ``policies`` list, the extension point it honours. ``raw_response_hook`` fires once per
HTTP response (retries and result pages included).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from azure.core import MatchConditions
from azure.core.pipeline import PipelineResponse
from azure.core.pipeline.policies import RequestIdPolicy, RetryPolicy
from azure.data.tables import TableClient, UpdateMode
from azure.data.tables._policies import TablesRetryPolicy  # the SDK's retry policy for Tables

from ..account.endpoint import Target
from ..account.failures import SDK_ERRORS, error_code_of
from ..service.error_codes import ServiceError, is_throttling, service_message
from ..service.operations import Operation
from ..service.retry import RetryStrategy
from .base import AttemptHooks, Entity

__all__ = ["SdkTransport", "StrategyRetryPolicy", "with_policies"]

MODES = {"merge": UpdateMode.MERGE, "replace": UpdateMode.REPLACE}


class StrategyRetryPolicy(TablesRetryPolicy):
    """Retries what the docs say to retry, waiting as the strategy says; reports each wait.

    It extends the SDK's own Tables retry policy, which also carries the pipeline's location
    context (primary/secondary) that the Tables paging code reads back.
    """

    def __init__(
        self, strategy: RetryStrategy, *, seed: str | None = None, on_backoff: Callable[[float], None] | None = None
    ) -> None:
        retries = strategy.retries
        # connection errors and timeouts (reads) are retried at once, as the lean client does
        super().__init__(
            retry_total=retries, retry_connect=retries, retry_read=retries, retry_status=retries, retry_backoff_factor=0
        )
        self.strategy = strategy
        self.rng = random.Random(seed)
        self.on_backoff = on_backoff

    def is_retry(self, settings: dict[str, Any], response: PipelineResponse) -> bool:
        if not settings["total"]:
            return False
        http = response.http_response
        return is_throttling(http.status_code, http.headers.get("x-ms-error-code"))

    def sleep(self, settings: dict[str, Any], transport: Any, response: PipelineResponse | None = None) -> None:
        """Called before every retry: report it (``on_backoff``) and wait as the strategy says."""
        # a connection error or timeout (no response) is retried at once
        seconds = 0.0 if response is None else self.strategy.backoff(len(settings["history"]), self.rng)
        if self.on_backoff is not None:
            self.on_backoff(seconds)
        if seconds > 0:
            transport.sleep(seconds)


def with_policies(make_client: Callable[..., Any], retry: RetryPolicy, request_ids: RequestIdPolicy, **kwargs: Any) -> Any:
    """A client whose pipeline carries ``retry`` and ``request_ids`` in place of the SDK's own retry and request id policies."""
    base = make_client(**kwargs)

    def ours(policy: Any) -> Any:
        if isinstance(policy, RetryPolicy):
            return retry
        return request_ids if isinstance(policy, RequestIdPolicy) else policy

    policies = [ours(p) for p in base._policies]  # the SDK's own list
    base.close()
    return make_client(policies=policies, **kwargs)


def _call(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except SDK_ERRORS as err:
        raise ServiceError(error_code_of(err), getattr(err, "status_code", None)) from err


class SdkTransport:
    """``base.Transport`` through azure-data-tables' TableClient."""

    def __init__(self, *, target: Target, table: str, retry: RetryStrategy, seed: str | None, hooks: AttemptHooks) -> None:
        self.hooks = hooks
        self.last: tuple[int, str | None] = (0, None)  # the last answer's status and error code
        policy = StrategyRetryPolicy(retry, seed=seed, on_backoff=hooks.on_backoff)
        self.request_ids = RequestIdPolicy()  # applied once per operation, before the retries: every attempt carries it
        self.client: TableClient = with_policies(
            lambda **kw: target.table(table, **kw), policy, self.request_ids, raw_response_hook=self._answer
        )

    def set_request_id(self, value: str) -> None:
        self.request_ids.set_request_id(value)

    def _answer(self, pipeline_response: PipelineResponse) -> None:
        response = pipeline_response.http_response
        self.last = (response.status_code, response.headers.get("x-ms-error-code"))
        throttled = self.last[0] >= 500 and is_throttling(*self.last)
        self.hooks.on_attempt(*self.last, service_message(response.text()) if throttled else "")  # its reason's words

    def get(self, pk: str, rk: str, select: list[str] | None = None) -> Any:
        return _call(lambda: self.client.get_entity(pk, rk, select=select))

    def insert(self, entity: Entity) -> None:
        _call(lambda: self.client.create_entity(entity))

    def upsert(self, entity: Entity, mode: str) -> None:
        _call(lambda: self.client.upsert_entity(entity, mode=MODES[mode]))

    def update(self, entity: Entity, mode: str, etag: str | None = None) -> None:
        conditions = {"etag": etag, "match_condition": MatchConditions.IfNotModified} if etag is not None else {}
        _call(lambda: self.client.update_entity(entity, mode=MODES[mode], **conditions))

    def delete(self, pk: str, rk: str) -> None:
        _call(lambda: self.client.delete_entity(pk, rk))
        status, code = self.last
        if status == 404:  # the SDK returns quietly; the service answered ResourceNotFound, and the run counts what it answered
            raise ServiceError(code or "ResourceNotFound", status)

    def query(
        self,
        where: str | None,
        parameters: Mapping[str, Any] | None,
        *,
        select: list[str] | None,
        page_size: int,
        limit: int | None = None,
        decode: bool = True,  # the SDK always decodes
    ) -> Iterator[Any]:
        """The SDK's pages; with ``limit``, each asks for what remains (its pager reads ``results_per_page`` anew for
        every page)."""
        try:
            if where:
                found = self.client.query_entities(where, parameters=parameters, results_per_page=page_size, select=select)
            else:
                found = self.client.list_entities(results_per_page=page_size, select=select)
            if limit is None:
                yield from found
                return
            pages, left = found.by_page(), limit
            pages.results_per_page = min(page_size, left)
            for page in pages:
                rows = list(page)
                yield from rows
                left -= len(rows)
                if left <= 0:
                    return
                pages.results_per_page = min(page_size, left)
        except SDK_ERRORS as err:
            raise ServiceError(error_code_of(err), getattr(err, "status_code", None)) from err

    def batch(self, operations: list[tuple[Operation, Entity]]) -> None:
        sdk_ops = [(op.action, entity, {"mode": MODES[op.mode]}) if op.mode else (op.action, entity) for op, entity in operations]
        _call(lambda: self.client.submit_transaction(sdk_ops))

    def close(self) -> None:
        self.client.close()
