"""The contract between the export routes and the export workflow (docs/decisions/0068): plain pydantic models,
no I/O, so the worker's sandbox can import it. Only ids, file names and counts cross it: never text, and never
a digest of text (the plaintext SHA-256s live in the sealed manifest only)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from workspace_memory.kernel.clock import DAY_SECONDS
from workspace_memory.kernel.terms import ExportFile, ExportScope

WORKFLOW_NAME = "WorkspaceExportWorkflow"
EXPORT_TTL_SECONDS = DAY_SECONDS
"""An archive lives 24 hours from its request, downloaded or not: then every item of it expires (TTL)."""
MAX_ARCHIVE_BYTES = 5_000_000
"""The most an archive's response may weigh, counted as Lambda carries it (the JSON body escaped twice: once as
the response, once inside the Lambda envelope): under Lambda's 6 MB response limit with room for the rest."""
CHUNK_BYTES = 350_000
"""A chunk item's ciphertext slice (DynamoDB's item limit is 400 KB)."""

FILES: dict[ExportScope, tuple[ExportFile, ...]] = {
    ExportScope.ME: (
        ExportFile.DOCUMENTS,
        ExportFile.ENTRIES,
        ExportFile.NOTES,
        ExportFile.KEY_SESSIONS,
        ExportFile.RECEIPTS,
    ),
    ExportScope.WORKSPACE: (
        ExportFile.DOCUMENTS,
        ExportFile.DOCUMENT_MD,
        ExportFile.ENTRIES,
        ExportFile.POLICY,
        ExportFile.MEMBERS,
        ExportFile.RETENTION,
    ),
}
"""The files each scope's archive holds, in the order the workflow writes them (then the manifest)."""


def export_workflow_id(export_id: str) -> str:
    return f"workspace-export-{export_id}"


class Phase(StrEnum):
    STARTED = "started"
    FILES = "files"
    MANIFEST = "manifest"
    DONE = "done"


class Memo:
    """The memo fields an export's progress is read from (`describe()`, no worker needed)."""

    PHASE = "phase"
    FILES_DONE = "filesDone"
    FILES_TOTAL = "filesTotal"


class ExportInput(BaseModel):
    """Server-set when the request is accepted."""

    model_config = ConfigDict(frozen=True)

    workspace_id: str
    export_id: str
    scope: ExportScope


class FileInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    export_id: str
    file: ExportFile


class FileResult(BaseModel):
    """One file written: how many records it holds and in how many chunks; `too_large` when the file alone is
    past the archive limit (then no chunk of it was written)."""

    file: ExportFile
    count: int
    chunks: int
    too_large: bool = False


class FinishInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    export_id: str
    too_large: bool = False


class FinishResult(BaseModel):
    """`ready`, or `too_large` (then every chunk was deleted)."""

    status: str
    files: int


class ExportResult(BaseModel):
    export_id: str
    status: str
    files: int
