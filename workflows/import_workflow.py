"""Importing a workspace archive (docs/decisions/0069): one activity per file the archive's rows are applied
from, then the completion. Deterministic, no I/O: the steps are activities (`workflows/import_activities.py`).
Only ids, file names and counts enter the history; a worker killed mid-import loses nothing: the next one
replays the history and applies what is left (each batch is recorded on the import once, so none lands twice)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.export_workflow import HEARTBEAT_TIMEOUT, STEP_RETRY, STEP_TIMEOUT
    from workflows.import_activities import ImportActivities
    from workspace_memory.workspaces.import_contract import (
        APPLIED_FILES,
        WORKFLOW_NAME,
        FileInput,
        ImportInput,
        ImportResult,
    )


@workflow.defn(name=WORKFLOW_NAME)
class WorkspaceImportWorkflow:
    @workflow.run
    async def run(self, data: ImportInput) -> ImportResult:
        for file in APPLIED_FILES:
            await workflow.execute_activity_method(
                ImportActivities.apply_import_file,
                FileInput(workspace_id=data.workspace_id, import_id=data.import_id, file=file),
                start_to_close_timeout=STEP_TIMEOUT,
                heartbeat_timeout=HEARTBEAT_TIMEOUT,
                retry_policy=STEP_RETRY,
            )
        finished = await workflow.execute_activity_method(
            ImportActivities.finish_import,
            data,
            start_to_close_timeout=STEP_TIMEOUT,
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=STEP_RETRY,
        )
        return ImportResult(import_id=data.import_id, status=finished.status, counts=finished.counts)
