"""Deleting a workspace after its tombstone: the branch key destroyed (again: a DELETE that crashed before
doing it is covered), then every item purged in batches, META last. Deterministic, no I/O: the steps are
activities (`workflows/deletion_activities.py`) and progress is the workflow's memo, which the API reads
with `describe()`. Only ids and counts enter the history; a worker killed mid-purge loses nothing: the next
one replays the history and goes on with the next batch.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from workflows.deletion_activities import DeletionActivities
    from workflows.history_activities import delete_in_workflow
    from workspace_memory.workspaces.deletion_contract import (
        WORKFLOW_NAME,
        BranchKeyInput,
        DeletionInput,
        DeletionResult,
        Memo,
        Phase,
        PurgeBatchInput,
    )

STEP_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    # No attempt limit: a deletion must finish; a refusal is non-retryable and fails the run instead.
)
STEP_TIMEOUT = timedelta(seconds=60)
HEARTBEAT_TIMEOUT = timedelta(seconds=10)
"""A killed worker's batch is retried by another after this long (a batch takes well under a second)."""
CONTINUE_AS_NEW_BATCHES = 1000
"""Batches per run before continuing as new, so a huge workspace never grows one history without bound."""


@workflow.defn(name=WORKFLOW_NAME)
class WorkspaceDeletionWorkflow:
    @workflow.run
    async def run(self, deletion: DeletionInput) -> DeletionResult:
        ws = deletion.workspace_id
        workflow.upsert_memo({Memo.PHASE: Phase.BRANCH_KEY.value})
        key_items = await workflow.execute_activity_method(
            DeletionActivities.destroy_branch_key,
            BranchKeyInput(workspace_id=ws),
            start_to_close_timeout=STEP_TIMEOUT,
            retry_policy=STEP_RETRY,
        )
        deleted = int(workflow.memo_value(Memo.ITEMS_DELETED, 0, type_hint=int))  # > 0 after continue-as-new
        workflow.upsert_memo({Memo.BRANCH_KEY_DESTROYED: True, Memo.PHASE: Phase.PURGING.value})
        cleared: list[str] = []
        for _ in range(CONTINUE_AS_NEW_BATCHES):
            batch = await workflow.execute_activity_method(
                DeletionActivities.purge_batch,
                PurgeBatchInput(workspace_id=ws, limit=deletion.batch_size, cleared=cleared),
                start_to_close_timeout=STEP_TIMEOUT,
                heartbeat_timeout=HEARTBEAT_TIMEOUT,
                retry_policy=STEP_RETRY,
            )
            cleared = batch.turns
            if cleared:  # the turns' executions first; their admissions go in the next batch
                await delete_in_workflow(cleared, STEP_TIMEOUT, STEP_RETRY)
            deleted += batch.deleted
            workflow.upsert_memo({Memo.ITEMS_DELETED: deleted})
            if not batch.more:
                workflow.upsert_memo({Memo.PHASE: Phase.DONE.value})
                return DeletionResult(workspace_id=ws, items_deleted=deleted, branch_key_items_deleted=key_items)
        return workflow.continue_as_new(
            deletion,
            memo={
                Memo.REQUESTED_BY: deletion.requested_by,
                Memo.REQUESTED_AT: deletion.requested_at,
                Memo.PHASE: Phase.PURGING.value,
                Memo.ITEMS_DELETED: deleted,
                Memo.BRANCH_KEY_DESTROYED: True,
            },
        )
