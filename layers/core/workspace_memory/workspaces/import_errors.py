"""The refusals of an import (docs/decisions/0069): their codes are the error registry's like any other."""

from __future__ import annotations

from workspace_memory.kernel.errors import Conflict, InvalidInput, NotFound


class InvalidArchive(InvalidInput):
    """The archive is not one this service exported, or not as it exported it: a file missing, added or changed
    (its digest), a manifest altered (its signature), a row this service never writes. Nothing was stored."""

    code = "INVALID_ARCHIVE"


class InvalidImportId(InvalidInput):
    """An import id in a path that is not one the service issues (`im_` + 24 hex digits)."""

    code = "INVALID_IMPORT_ID"


class ImportNotFound(NotFound):
    """No such import in this workspace for the caller (the same answer for another member's)."""

    code = "IMPORT_NOT_FOUND"


class ImportTargetNotEmpty(Conflict):
    """An archive is imported into a new, empty workspace only: no document, entry, policy, or other member."""

    code = "IMPORT_TARGET_NOT_EMPTY"


class ImportNotRunning(Conflict):
    """A workflow step for an import that is no longer running (completed, or its staged files expired)."""

    code = "IMPORT_NOT_RUNNING"


class WorkspaceImporting(Conflict):
    """The workspace is being filled from an archive: every route but the import's own waits until it ends."""

    code = "WORKSPACE_IMPORTING"
