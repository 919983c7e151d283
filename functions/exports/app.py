"""Exporting a workspace (decisions/0068): a person's own data or, for the owner, the whole workspace, written by
the export workflow as sealed files, downloaded once by whoever asked; importing a whole-workspace archive into a
new workspace (decisions/0069); and both workflows' steps (IAM)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from workspace_memory.api.body import ARCHIVE_BODY_BYTES
from workspace_memory.api.http import automation_caller, build_resolver, human_user, lambda_entry, respond
from workspace_memory.api.models.exports import ArchiveOut, ExportFileOut, ExportFinishOut, ExportOut
from workspace_memory.api.models.imports import ImportFileOut, ImportFinishOut, ImportOut
from workspace_memory.api.schemas.exports import (
    ApplyImportFile,
    FinishExportStep,
    RequestExport,
    RequestImport,
    WriteExportFile,
)
from workspace_memory.bootstrap import export_service, import_service

app = build_resolver()


@app.post(
    "/v1/workspaces/<ws>/exports",
    summary="Export your data, or the whole workspace",
    description=(
        "Starts an export: `scope` `me` (any member: the versions you authored, your private entries and their "
        "revisions, your working notes, your key sessions' metadata, your conversations' recall receipts) or "
        "`workspace` (the owner only: every stored version and the current Markdown document, every entry but "
        "other members' private ones, the policy, the members and their roles, the retention settings). 202 "
        "with the export's id and progress; the archive is sealed under the workspace's key and expires 24 "
        "hours after the request."
    ),
)
def request_export(ws: str, body: Annotated[RequestExport, Body()]) -> Response[ExportOut]:
    return respond(202, ExportOut.of(export_service().request(human_user(app), ws, body.scope)))


@app.get(
    "/v1/workspaces/<ws>/exports/<export_id>",
    summary="Follow an export",
    description=(
        "The export's progress (status, files written), for the member who requested it only (anyone else: 404)."
    ),
)
def get_export(ws: str, export_id: str) -> Response[ExportOut]:
    return respond(200, ExportOut.of(export_service().progress(human_user(app), ws, export_id)))


@app.get(
    "/v1/workspaces/<ws>/exports/<export_id>/archive",
    summary="Download an export's archive, once",
    description=(
        "The archive of a ready export, for the member who requested it: the manifest (per file its record count "
        "and the SHA-256 and size of its text) and every file's text. Served once: the archive's files are "
        "deleted by this request, and a second download is refused (410 `EXPORT_ALREADY_DOWNLOADED`)."
    ),
)
def download_export(ws: str, export_id: str) -> Response[ArchiveOut]:
    return respond(200, ArchiveOut.of(export_service().download(human_user(app), ws, export_id)))


@app.post(
    "/v1/automation/workspaces/<ws>/exports/<export_id>/files",
    summary="Write one file of an export",
    description=(
        "The export workflow's step (IAM): builds one file of the archive, seals it under the workspace's key and "
        "stores it; answers its record count. Repeatable; an export no longer running is refused (409)."
    ),
)
def write_export_file(
    ws: str,
    export_id: str,
    body: Annotated[WriteExportFile, Body()],
) -> Response[ExportFileOut]:
    automation_caller(app)
    written = export_service().write_file(ws, export_id, body.file)
    return respond(
        200,
        ExportFileOut(file=written.file.value, count=written.count, chunks=written.chunks, too_large=written.too_large),
    )


@app.post(
    "/v1/automation/workspaces/<ws>/exports/<export_id>/finish",
    summary="Finish an export with its manifest",
    description=(
        "The export workflow's last step (IAM): writes the sealed manifest and makes the export ready, or, past "
        "the archive limit, deletes its files (`too_large`). Repeatable: a finished export answers its status."
    ),
)
def finish_export(
    ws: str,
    export_id: str,
    body: Annotated[FinishExportStep, Body()],
) -> Response[ExportFinishOut]:
    automation_caller(app)
    finished = export_service().finish(ws, export_id, body.too_large)
    return respond(200, ExportFinishOut(status=finished.status, files=finished.files))


@app.post(
    "/v1/workspaces/<ws>/imports",
    summary="Import a workspace archive into this new workspace",
    description=(
        "The owner of a new, empty workspace (no document, entry, policy or other member) imports an archive of a "
        "whole workspace they exported, exactly as its download gave it (`manifest`, `files`). The archive is "
        "checked first (its manifest's signature, every file's count, SHA-256 and size, every row), then staged "
        "sealed under this workspace's key and applied by a workflow: every version, entry revision, member, the "
        "policy and the retention, with their ids, authors and times. 202 with the import's progress; until it "
        "completes every other route of the workspace answers 409 `WORKSPACE_IMPORTING`. Posting the same archive "
        "again is the same import (resumed if it stopped)."
    ),
)
def request_import(ws: str, body: Annotated[RequestImport, Body()]) -> Response[ImportOut]:
    return respond(202, ImportOut.of(import_service().request(human_user(app), ws, body.manifest, body.files)))


@app.get(
    "/v1/workspaces/<ws>/imports/<import_id>",
    summary="Follow an import",
    description="The import's progress (status, steps applied, what it wrote), for the owner who asked only.",
)
def get_import(ws: str, import_id: str) -> Response[ImportOut]:
    return respond(200, ImportOut.of(import_service().progress(human_user(app), ws, import_id)))


@app.post(
    "/v1/automation/workspaces/<ws>/imports/<import_id>/files",
    summary="Apply one file of an import",
    description=(
        "The import workflow's step (IAM): writes the batches of one staged file not yet applied, each recorded "
        "once. Repeatable; an import no longer running is refused (409)."
    ),
)
def apply_import_file(ws: str, import_id: str, body: Annotated[ApplyImportFile, Body()]) -> Response[ImportFileOut]:
    automation_caller(app)
    applied = import_service().apply_file(ws, import_id, body.file)
    return respond(200, ImportFileOut(file=applied.file.value, steps=applied.steps, applied=applied.applied))


@app.post(
    "/v1/automation/workspaces/<ws>/imports/<import_id>/finish",
    summary="Complete an import",
    description=(
        "The import workflow's last step (IAM): completes the import and opens the workspace in one transaction, "
        "then deletes the staged files. Repeatable: a completed import answers the same."
    ),
)
def finish_import(ws: str, import_id: str) -> Response[ImportFinishOut]:
    automation_caller(app)
    finished = import_service().finish(ws, import_id)
    return respond(200, ImportFinishOut(status=finished.status, counts=finished.counts))


handler: Any = lambda_entry(app, ARCHIVE_BODY_BYTES)
