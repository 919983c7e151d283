"""Exporting a workspace (docs/decisions/0068): one activity per file of the archive, then the manifest.
Deterministic, no I/O: the steps are activities (`workflows/export_activities.py`) and progress is the
workflow's memo, which the API reads with `describe()`. Only ids, file names and counts enter the history; a
worker killed mid-export loses nothing: the next one replays the history and writes the files still missing
(a file written again is the same plaintext, so the manifest is the same)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from workflows.export_activities import ExportActivities
    from workspace_memory.workspaces.export_contract import (
        FILES,
        WORKFLOW_NAME,
        ExportInput,
        ExportResult,
        FileInput,
        FinishInput,
        Memo,
        Phase,
    )

STEP_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=20,
)
STEP_TIMEOUT = timedelta(seconds=60)
HEARTBEAT_TIMEOUT = timedelta(seconds=10)
"""A killed worker's step is retried by another after this long."""
RUN_TIMEOUT = timedelta(hours=23)
"""Within the archive's 24-hour life: a run still going then has nothing left to write into."""


@workflow.defn(name=WORKFLOW_NAME)
class WorkspaceExportWorkflow:
    @workflow.run
    async def run(self, export: ExportInput) -> ExportResult:
        files = FILES[export.scope]
        workflow.upsert_memo({Memo.PHASE: Phase.FILES.value, Memo.FILES_TOTAL: len(files)})
        too_large = False
        for done, file in enumerate(files, start=1):
            written = await workflow.execute_activity_method(
                ExportActivities.write_export_file,
                FileInput(workspace_id=export.workspace_id, export_id=export.export_id, file=file),
                start_to_close_timeout=STEP_TIMEOUT,
                heartbeat_timeout=HEARTBEAT_TIMEOUT,
                retry_policy=STEP_RETRY,
            )
            too_large = too_large or written.too_large
            workflow.upsert_memo({Memo.FILES_DONE: done})
            if too_large:
                break
        workflow.upsert_memo({Memo.PHASE: Phase.MANIFEST.value})
        finished = await workflow.execute_activity_method(
            ExportActivities.finish_export,
            FinishInput(workspace_id=export.workspace_id, export_id=export.export_id, too_large=too_large),
            start_to_close_timeout=STEP_TIMEOUT,
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=STEP_RETRY,
        )
        workflow.upsert_memo({Memo.PHASE: Phase.DONE.value})
        return ExportResult(export_id=export.export_id, status=finished.status, files=finished.files)
