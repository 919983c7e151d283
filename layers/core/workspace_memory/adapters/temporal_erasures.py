"""ErasureRunner over a Temporal client: starts the `MemberErasureWorkflow`, once per erasure."""

from __future__ import annotations

import contextlib

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from workspace_memory.adapters.temporal_client import TemporalConnection
from workspace_memory.workspaces.erasure_contract import WORKFLOW_NAME, ErasureInput, erasure_workflow_id


class TemporalErasures(TemporalConnection):
    def start(self, erasure: ErasureInput) -> None:
        self._run(self._start(erasure))

    async def _start(self, erasure: ErasureInput) -> None:
        """A running erasure is reused, a completed one is not run again, a failed one may start anew."""
        client = await self._connect()
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await client.start_workflow(
                WORKFLOW_NAME,
                erasure,
                id=erasure_workflow_id(erasure.workspace_id, erasure.erasure_id),
                task_queue=self._settings.temporal_task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
