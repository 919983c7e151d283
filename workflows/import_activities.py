"""Activities of an import: all its I/O, through the automation API's import routes (the worker never touches
the table). Each is idempotent: a step of a file applied before is skipped by the route (each is recorded once),
and completing an import already completed answers the same."""

from __future__ import annotations

from temporalio import activity

from workflows.automation import ImportApi
from workflows.export_activities import body_of
from workspace_memory.kernel.terms import ExportFile
from workspace_memory.workspaces.import_contract import FileInput, FileResult, FinishResult, ImportInput


class ImportActivities:
    def __init__(self, api: ImportApi) -> None:
        self._api = api

    @activity.defn(name="apply_import_file")
    def apply_import_file(self, data: FileInput) -> FileResult:
        activity.heartbeat(data.import_id)
        applied = body_of(self._api.apply_import_file(data.workspace_id, data.import_id, data.file.value))
        return FileResult(file=ExportFile(applied.file), steps=applied.steps, applied=applied.applied)

    @activity.defn(name="finish_import")
    def finish_import(self, data: ImportInput) -> FinishResult:
        activity.heartbeat(data.import_id)
        finished = body_of(self._api.finish_import(data.workspace_id, data.import_id))
        return FinishResult(status=finished.status, counts=finished.counts)
