"""DeletionRunner over a Temporal client: starts the `WorkspaceDeletionWorkflow` and reads its progress from
the workflow's memo (`describe()`: the Temporal service answers it, no worker needed)."""

from __future__ import annotations

import contextlib
from typing import Any

from temporalio.client import WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from workspace_memory.adapters.temporal_client import TemporalConnection
from workspace_memory.kernel.clock import iso
from workspace_memory.workspaces.deletion import DeletionProgress
from workspace_memory.workspaces.deletion_contract import (
    WORKFLOW_NAME,
    DeletionInput,
    Memo,
    Phase,
    deletion_workflow_id,
)

_STATUS = {WorkflowExecutionStatus.RUNNING: "running", WorkflowExecutionStatus.COMPLETED: "completed"}


def start_options(deletion: DeletionInput, task_queue: str) -> dict[str, Any]:
    """One deletion per workspace: a running one is reused (a second DELETE), a completed one is not run again,
    a failed one (terminated, timed out) may be started anew by the owner's next DELETE."""
    return {
        "id": deletion_workflow_id(deletion.workspace_id),
        "task_queue": task_queue,
        "id_reuse_policy": WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        "id_conflict_policy": WorkflowIDConflictPolicy.USE_EXISTING,
        "memo": {
            Memo.REQUESTED_BY: deletion.requested_by,
            Memo.REQUESTED_AT: deletion.requested_at,
            Memo.PHASE: Phase.STARTED.value,
            Memo.ITEMS_DELETED: 0,
            Memo.BRANCH_KEY_DESTROYED: False,
        },
    }


class TemporalDeletions(TemporalConnection):
    def start(self, deletion: DeletionInput) -> None:
        self._run(self._start(deletion))

    async def _start(self, deletion: DeletionInput) -> None:
        client = await self._connect()
        with contextlib.suppress(WorkflowAlreadyStartedError):  # completed already: that is the answer
            await client.start_workflow(
                WORKFLOW_NAME, deletion, **start_options(deletion, self._settings.temporal_task_queue)
            )

    def progress(self, workspace_id: str) -> DeletionProgress | None:
        return self._run(self._progress(workspace_id))

    async def _progress(self, workspace_id: str) -> DeletionProgress | None:
        found = await self._described(deletion_workflow_id(workspace_id))
        if found is None:
            return None
        described, memo = found
        closed = described.close_time
        return DeletionProgress(
            workspace_id=workspace_id,
            requested_by=str(memo.get(Memo.REQUESTED_BY, "")),
            status=_STATUS.get(described.status, "failed") if described.status is not None else "running",
            phase=str(memo.get(Memo.PHASE, Phase.STARTED.value)),
            items_deleted=int(memo.get(Memo.ITEMS_DELETED, 0)),
            branch_key_destroyed=bool(memo.get(Memo.BRANCH_KEY_DESTROYED, False)),
            requested_at=str(memo.get(Memo.REQUESTED_AT, "")),
            completed_at=iso(closed.timestamp()) if closed is not None else None,
        )
