"""ImportRunner over a Temporal client: starts the `WorkspaceImportWorkflow` once per import (a second start of
the same import, by an archive posted again, joins the run that exists, or after a failed run starts one that
resumes it). Progress is the import's record; the workflow's description says only whether its run failed."""

from __future__ import annotations

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

from workspace_memory.adapters.temporal_client import TemporalConnection, ended_unfinished
from workspace_memory.workspaces.import_contract import WORKFLOW_NAME, ImportInput, import_workflow_id


class TemporalImports(TemporalConnection):
    def start(self, data: ImportInput) -> None:
        self._run(self._start(data))

    async def _start(self, data: ImportInput) -> None:
        client = await self._connect()
        await client.start_workflow(
            WORKFLOW_NAME,
            data,
            id=import_workflow_id(data.import_id),
            task_queue=self._settings.temporal_task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )

    def failed(self, import_id: str) -> bool:
        return self._run(self._failed(import_id))

    async def _failed(self, import_id: str) -> bool:
        found = await self._described(import_workflow_id(import_id))
        return found is not None and ended_unfinished(found[0])
