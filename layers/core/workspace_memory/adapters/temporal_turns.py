"""TurnRunner over a Temporal client, usable from synchronous Lambda handlers.

The client is asyncio-based; a handler is not. One event loop runs in a daemon thread for the life of the
process (a warm Lambda keeps it, and its gRPC connection, across invocations) and calls are submitted to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Mapping
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from workspace_memory.adapters.temporal_codec import data_converter
from workspace_memory.errors import Unavailable
from workspace_memory.ports import Cipher
from workspace_memory.settings import Settings
from workspace_memory.turn_contract import STATUS_QUERY, WORKFLOW_NAME, TurnInput, TurnView

T = TypeVar("T")

RUN_TIMEOUT_SECONDS = 30 * 60

_FINISHED = {
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "failed",
    WorkflowExecutionStatus.TERMINATED: "failed",
    WorkflowExecutionStatus.TIMED_OUT: "failed",
}


def start_options(task_queue: str) -> dict[str, Any]:
    """How ingress starts a turn's workflow (besides its id, the turn id): the queue, no second run under
    one id, and the run timeout. The benchmark starts its timed turns with the very same options."""
    return {
        "task_queue": task_queue,
        "id_reuse_policy": WorkflowIDReusePolicy.REJECT_DUPLICATE,
        "run_timeout": timedelta(seconds=RUN_TIMEOUT_SECONDS),
    }


class TemporalTurns:
    def __init__(self, settings: Settings, cipher: Cipher, connect: Mapping[str, Any] | None = None) -> None:
        """`connect`: extra `Client.connect` options (TLS, API key, gRPC metadata), e.g. from
        `temporalio.envconfig`; address, namespace and the data converter always come from here."""
        self._settings = settings
        self._cipher = cipher
        self._connect_options = dict(connect or {})
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, name="temporal-client", daemon=True).start()
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
        try:
            return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)
        except (RPCError, TimeoutError, ConnectionError, RuntimeError) as exc:
            raise Unavailable(f"workflow service unavailable ({type(exc).__name__})", transient=True) from exc

    async def _connect(self) -> Client:
        async with self._lock:
            if self._client is None:
                options = {
                    **self._connect_options,
                    "target_host": self._settings.temporal_address,
                    "namespace": self._settings.temporal_namespace,
                    "data_converter": data_converter(self._cipher),
                }
                self._client = await Client.connect(**options)
            return self._client

    def start(self, turn: TurnInput) -> None:
        self._run(self._start(turn))

    async def _start(self, turn: TurnInput) -> None:
        client = await self._connect()
        # The same idempotency key: the turn already exists, and that is the answer.
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await client.start_workflow(
                WORKFLOW_NAME, turn, id=turn.turn_id, **start_options(self._settings.temporal_task_queue)
            )

    def view(self, turn_id: str) -> TurnView | None:
        return self._run(self._view(turn_id))

    async def _view(self, turn_id: str) -> TurnView | None:
        client = await self._connect()
        handle = client.get_workflow_handle(turn_id, result_type=TurnView)
        try:
            described = await handle.describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return None
            raise
        if described.status == WorkflowExecutionStatus.COMPLETED:
            result: TurnView = await handle.result()
            return result
        view: TurnView = await handle.query(STATUS_QUERY, result_type=TurnView)
        failed = _FINISHED.get(described.status) if described.status is not None else None
        return view.model_copy(update={"status": failed}) if failed else view
