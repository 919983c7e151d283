"""The erasure's activities: a step, through the automation API's erasure route (the worker never touches the
table), and the deletion of the member's turns' Temporal executions, through the worker's own Temporal client
(their histories hold the member's messages, under the stack's key). Both idempotent, so Temporal may retry
them freely."""

from __future__ import annotations

from temporalio import activity
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from workflows.automation import ErasureApi
from workflows.deletion_activities import body_of
from workspace_memory.workspaces.erasure_contract import StepInput, StepResult, TurnHistories


class ErasureActivities:
    def __init__(self, api: ErasureApi) -> None:
        self._api = api

    @activity.defn(name="erasure_step")
    def erasure_step(self, data: StepInput) -> StepResult:
        activity.heartbeat(data.phase.value)
        step = body_of(self._api.erasure_step(data))
        return StepResult(more=step.more, after=step.after, turns=step.turns)

    @activity.defn(name="delete_turn_histories")
    async def delete_turn_histories(self, data: TurnHistories) -> int:
        """Asks Temporal to delete each turn's execution (a running one is terminated first), then fails,
        to be retried with backoff, while any of them can still be described: Temporal deletes a history in
        the background, and the erasure's receipt must not be written before the histories are gone."""
        client = activity.client()
        for turn in data.turns:
            request = DeleteWorkflowExecutionRequest(
                namespace=client.namespace, workflow_execution=WorkflowExecution(workflow_id=turn)
            )
            try:
                await client.workflow_service.delete_workflow_execution(request)
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:  # gone already: a retry's, or a turn never started
                    raise
        left = [turn for turn in data.turns if await _exists(client, turn)]
        if left:
            raise ApplicationError(f"{len(left)} of {len(data.turns)} turn histories are still being deleted")
        return len(data.turns)


async def _exists(client: Client, workflow_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True
