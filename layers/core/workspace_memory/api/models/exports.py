"""Exporting a workspace: an export's progress, its archive (once), and the export workflow's steps (automation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workspace_memory.api.models.base import OutModel

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.workspaces.exports import Archive, ExportProgress


class ExportOut(OutModel):
    """An export's progress, for whoever requested it (ids, counts and times only)."""

    export_id: str
    workspace_id: str
    scope: str
    status: str
    """`running`, `ready` (download it once), `downloaded`, `too_large` (nothing kept), `failed`."""
    phase: str
    files_done: int
    files_total: int
    created_at: str
    expires_at: str

    @classmethod
    def of(cls, progress: ExportProgress) -> ExportOut:
        return cls.model_validate(progress, from_attributes=True)


class ArchiveOut(OutModel):
    """The archive: the manifest (per file its record count, the SHA-256 and UTF-8 size of its text) and every
    file's text by name (`*.json` files are JSON text, `document.md` the Markdown document)."""

    manifest: dict[str, Any]
    files: dict[str, str]

    @classmethod
    def of(cls, archive: Archive) -> ArchiveOut:
        return cls(manifest=archive.manifest, files=archive.files)


class ExportFileOut(OutModel):
    """One file written by the export workflow: its record count and chunks (`tooLarge`: not stored)."""

    file: str
    count: int
    chunks: int
    too_large: bool


class ExportFinishOut(OutModel):
    """The export's last step: its status (`ready` or `too_large`) and how many files it holds."""

    status: str
    files: int
