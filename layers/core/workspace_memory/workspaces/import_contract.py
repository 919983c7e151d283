"""The contract between the import routes and the import workflow (docs/decisions/0069): plain pydantic models,
no I/O, so the worker's sandbox can import it. Only ids, file names and counts cross it, never text."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from workspace_memory.kernel.terms import ExportFile

WORKFLOW_NAME = "WorkspaceImportWorkflow"
APPLIED_FILES = (ExportFile.MEMBERS, ExportFile.POLICY, ExportFile.DOCUMENTS, ExportFile.ENTRIES)
"""The files the workflow applies, in order (the retention is set when the import begins; document.md is the
text of the last version, checked then)."""


def import_workflow_id(import_id: str) -> str:
    return f"workspace-import-{import_id}"


class ImportInput(BaseModel):
    """Server-set when the request is accepted."""

    model_config = ConfigDict(frozen=True)

    workspace_id: str
    import_id: str


class FileInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    import_id: str
    file: ExportFile


class FileResult(BaseModel):
    """One file applied: how many steps it has and how many this attempt wrote (the rest were applied before)."""

    file: ExportFile
    steps: int
    applied: int


class FinishResult(BaseModel):
    status: str
    counts: dict[str, int]


class ImportResult(BaseModel):
    import_id: str
    status: str
    counts: dict[str, int]
