"""Erasing a member after their membership went: one phase after another, each a loop of idempotent steps
(activities, `workflows/erasure_activities.py`), the phase in the memo. Only the workspace's and the
erasure's ids and sort-key cursors enter the history, never the member's id (each step reads it from the
erasure's record). A worker killed mid-step loses nothing: a step that landed counted itself in the record,
and the next worker replays the history and goes on."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.deletion_workflow import HEARTBEAT_TIMEOUT, STEP_RETRY, STEP_TIMEOUT
    from workflows.erasure_activities import ErasureActivities
    from workflows.history_activities import delete_in_workflow
    from workspace_memory.workspaces.erasure_contract import (
        WORKFLOW_NAME,
        ErasureInput,
        ErasureResult,
        Memo,
        Phase,
        StepInput,
    )


@workflow.defn(name=WORKFLOW_NAME)
class MemberErasureWorkflow:
    @workflow.run
    async def run(self, erasure: ErasureInput) -> ErasureResult:
        steps = 0
        for phase in Phase:
            workflow.upsert_memo({Memo.PHASE: phase.value})
            after: str | None = None
            while True:
                result = await workflow.execute_activity_method(
                    ErasureActivities.erasure_step,
                    StepInput(
                        workspace_id=erasure.workspace_id, erasure_id=erasure.erasure_id, phase=phase, after=after
                    ),
                    start_to_close_timeout=STEP_TIMEOUT,
                    heartbeat_timeout=HEARTBEAT_TIMEOUT,
                    retry_policy=STEP_RETRY,
                )
                steps += 1
                if result.turns:
                    await delete_in_workflow(result.turns, STEP_TIMEOUT, STEP_RETRY)
                if not result.more:
                    break
                after = result.after
        return ErasureResult(workspace_id=erasure.workspace_id, erasure_id=erasure.erasure_id, steps=steps)
