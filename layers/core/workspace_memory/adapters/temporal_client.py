"""A Temporal client usable from synchronous Lambda handlers (turns and workspace deletions share it).

The client is asyncio-based; a handler is not. One event loop runs in a daemon thread for the life of the
process (a warm Lambda keeps it, and its gRPC connection, across invocations) and calls are submitted to it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from workspace_memory.adapters.temporal_codec import data_converter
from workspace_memory.kernel.errors import Unavailable
from workspace_memory.kernel.settings import Settings
from workspace_memory.store.ports import Cipher

T = TypeVar("T")

_ALIVE = {WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.COMPLETED, WorkflowExecutionStatus.CONTINUED_AS_NEW}


def ended_unfinished(described: WorkflowExecutionDescription) -> bool:
    """A run that closed without its result: failed, cancelled, terminated or timed out."""
    return described.status is not None and described.status not in _ALIVE


class TemporalConnection:
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

    async def _described(self, workflow_id: str) -> tuple[WorkflowExecutionDescription, Mapping[str, Any]] | None:
        """A workflow's description and memo (the Temporal service answers, no worker needed); None when no
        workflow has that id."""
        client = await self._connect()
        try:
            described = await client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return None
            raise
        return described, await described.memo()
