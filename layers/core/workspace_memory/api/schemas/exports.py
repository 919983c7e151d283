"""The exports' and imports' request bodies: what to export, and the workflow's steps of each."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ValidationError, ValidatorFunctionWrapHandler, WrapValidator

from workspace_memory.api.errors import refused
from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.errors import InvalidExportScope
from workspace_memory.kernel.terms import ExportFile, ExportScope


def _export_scope(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:
        raise refused(InvalidExportScope("scope must be me or workspace")) from None


class RequestExport(ApiModel):
    """What to export: `me` (the caller's own data in the workspace) or `workspace` (the owner only)."""

    scope: Annotated[ExportScope, WrapValidator(_export_scope)]


class WriteExportFile(ApiModel):
    """One file of an export, written by the export workflow."""

    file: ExportFile


class FinishExportStep(ApiModel):
    """The export's last step; `tooLarge` when a file alone was past the archive limit."""

    too_large: bool = False


class RequestImport(ApiModel):
    """An archive as an export's download gave it: its manifest and every file's text by name."""

    manifest: dict[str, Any]
    files: dict[str, str]


class ApplyImportFile(ApiModel):
    """One file of an import, applied by the import workflow."""

    file: ExportFile
