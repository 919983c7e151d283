"""TurnRunner over a Temporal client, usable from synchronous Lambda handlers (`TemporalConnection`)."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

from temporalio.client import WorkflowExecutionStatus
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from workspace_memory.adapters.temporal_client import TemporalConnection
from workspace_memory.turn_contract import STATUS_QUERY, WORKFLOW_NAME, TurnInput, TurnView

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
        if described.status == WorkflowExecutionStatus.COMPLETED:
            result: TurnView = await handle.result()
            return result
        view: TurnView = await handle.query(STATUS_QUERY, result_type=TurnView)
        failed = _FINISHED.get(described.status) if described.status is not None else None
        return view.model_copy(update={"status": failed}) if failed else view
