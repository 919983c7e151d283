"""Deleting turns' Temporal executions, for a workspace's deletion and a member's erasure: a turn's history holds
the member's message and the model's rounds under the stack's key, not the workspace's, so no crypto-shred and
no table scan reaches it. The worker does it with its own Temporal connection (`activity.client()`)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from workspace_memory.turns.turn_contract import TurnHistories


@activity.defn(name="delete_turn_histories")
async def delete_turn_histories(data: TurnHistories) -> int:
    """Asks Temporal to delete each turn's execution (a running one is terminated first), then fails, to be
    retried with backoff, while any of them can still be described: Temporal deletes a history in the
    background, and what comes after (a receipt, an admission's deletion) must not happen before it is gone.
    Idempotent: a turn gone already, or never started, is done."""
    client = activity.client()
    for turn in data.turns:
        request = DeleteWorkflowExecutionRequest(
            namespace=client.namespace, workflow_execution=WorkflowExecution(workflow_id=turn)
        )
        try:
            await client.workflow_service.delete_workflow_execution(request)
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
    left = [turn for turn in data.turns if await _exists(client, turn)]
    if left:
        raise ApplicationError(f"{len(left)} of {len(data.turns)} turn histories are still being deleted")
    return len(data.turns)


async def delete_in_workflow(turns: list[str], timeout: timedelta, retry: RetryPolicy) -> None:
    """Workflow side: runs `delete_turn_histories` for `turns` (deterministic: only schedules the activity)."""
    await workflow.execute_activity(
        delete_turn_histories, TurnHistories(turns=turns), start_to_close_timeout=timeout, retry_policy=retry
    )


async def _exists(client: Client, workflow_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True
