"""Activities of an export: all its I/O, through the automation API's export routes (the worker never touches
the table). Each is idempotent, so Temporal may retry it freely: a file written again is the same plaintext,
and finishing an export already finished answers the same status."""

from __future__ import annotations

from typing import TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from workflows.automation import ApiResponse, ExportApi
from workspace_memory.api.models.base import OutModel
from workspace_memory.kernel.terms import ExportFile
from workspace_memory.workspaces.export_contract import FileInput, FileResult, FinishInput, FinishResult

Answer = TypeVar("Answer", bound=OutModel)


class ExportActivities:
    def __init__(self, api: ExportApi) -> None:
        self._api = api

    @activity.defn(name="write_export_file")
    def write_export_file(self, data: FileInput) -> FileResult:
        activity.heartbeat(data.export_id)
        written = body_of(self._api.write_export_file(data.workspace_id, data.export_id, data.file.value))
        return FileResult(
            file=ExportFile(written.file), count=written.count, chunks=written.chunks, too_large=written.too_large
        )

    @activity.defn(name="finish_export")
    def finish_export(self, data: FinishInput) -> FinishResult:
        activity.heartbeat(data.export_id)
        finished = body_of(self._api.finish_export(data.workspace_id, data.export_id, data.too_large))
        return FinishResult(status=finished.status, files=finished.files)


def body_of(response: ApiResponse[Answer]) -> Answer:
    """The route's answer; a refusal (an export no longer running: 409) is final, never retried. Transport
    failures and 5xx raise `ApiUnavailable` in the client, which Temporal retries with backoff."""
    if response.body is None:
        raise ApplicationError(f"export step refused ({response.error_code or response.status})", non_retryable=True)
    return response.body
