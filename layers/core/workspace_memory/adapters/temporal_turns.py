"""TurnRunner over a Temporal client, usable from synchronous Lambda handlers (`TemporalConnection`).

A turn's view comes from what the Temporal server itself keeps (its description, and its history for the
input and the result), never from a workflow query: a query is answered by a worker, so with no worker
polling (all of them dead, or a deploy in between) the route waited for its deadline and answered 503.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any, Literal

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from workspace_memory.adapters.temporal_client import TemporalConnection
from workspace_memory.turns.turn_contract import WORKFLOW_NAME, TurnInput, TurnView

RUN_TIMEOUT_SECONDS = 30 * 60


def start_options(task_queue: str) -> dict[str, Any]:
    """How ingress starts a turn's workflow (besides its id, the turn id): the queue, no second run under
    one id, and the run timeout. The benchmark starts its timed turns with the very same options."""
    return {
        "task_queue": task_queue,
        "id_reuse_policy": WorkflowIDReusePolicy.REJECT_DUPLICATE,
        "run_timeout": timedelta(seconds=RUN_TIMEOUT_SECONDS),
    }


class TemporalTurns(TemporalConnection):
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
        if described.workflow_type != WORKFLOW_NAME:  # say, a workspace deletion's id: not a turn
            return None
        if described.status == WorkflowExecutionStatus.COMPLETED:
            result: TurnView = await handle.result()
            return result
        # Open, or closed without a result (failed, cancelled, terminated, timed out): the status alone; the
        # rounds, tool outcomes and receipts come with the result.
        running = described.status in (None, WorkflowExecutionStatus.RUNNING)
        status: Literal["running", "failed"] = "running" if running else "failed"
        turn = await _input(client, handle)
        return TurnView(conversation_id=turn.conversation_id, status=status)


async def _input(client: Client, handle: WorkflowHandle[Any, TurnView]) -> TurnInput:
    """The turn's input, from the first event of its history (which conversation it belongs to)."""
    async for event in handle.fetch_history_events(page_size=1):
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        turn: TurnInput = (await client.data_converter.decode(payloads, [TurnInput]))[0]
        return turn
    raise RuntimeError(f"workflow {handle.id} has an empty history")
