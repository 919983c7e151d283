"""ExportRunner over a Temporal client: starts the `WorkspaceExportWorkflow` and reads its progress from the
workflow's memo (`describe()`: the Temporal service answers it, no worker needed)."""

from __future__ import annotations

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

from workspace_memory.adapters.temporal_client import TemporalConnection, ended_unfinished
from workspace_memory.workspaces.export_contract import (
    FILES,
    WORKFLOW_NAME,
    ExportInput,
    Memo,
    Phase,
    export_workflow_id,
)
from workspace_memory.workspaces.exports import RunProgress


class TemporalExports(TemporalConnection):
    def start(self, export: ExportInput) -> None:
        self._run(self._start(export))

    async def _start(self, export: ExportInput) -> None:
        client = await self._connect()
        await client.start_workflow(
            WORKFLOW_NAME,
            export,
            id=export_workflow_id(export.export_id),
            task_queue=self._settings.temporal_task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            memo={Memo.PHASE: Phase.STARTED.value, Memo.FILES_DONE: 0, Memo.FILES_TOTAL: len(FILES[export.scope])},
        )

    def progress(self, export_id: str) -> RunProgress | None:
        return self._run(self._progress(export_id))

    async def _progress(self, export_id: str) -> RunProgress | None:
        found = await self._described(export_workflow_id(export_id))
        if found is None:
            return None
        described, memo = found
        return RunProgress(
            phase=str(memo.get(Memo.PHASE, Phase.STARTED.value)),
            files_done=int(memo.get(Memo.FILES_DONE, 0)),
            files_total=int(memo.get(Memo.FILES_TOTAL, 0)),
            failed=ended_unfinished(described),
        )
