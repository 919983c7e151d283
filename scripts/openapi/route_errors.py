"""The errors each route can raise (ROUTE_ERRORS), beyond those every route can give (COMMON_ERRORS), and
the status each answers through the one mapping in `workspace_memory.api.errors`. Importing this module
imports every module that defines a route's domain error.
"""

from __future__ import annotations

from scripts.localstack.template import Route
from workspace_memory.api.errors import ANY_ROUTE, INTERNAL, STATUS_BY_ERROR
from workspace_memory.document.purge import LineInHead
from workspace_memory.entries.limits import RateRaced
from workspace_memory.governance.redaction import PersonalDataInKey
from workspace_memory.kernel import errors
from workspace_memory.pages.errors import (
    EntryAlreadyFiled,
    EntryNotFiled,
    FilingScopeMismatch,
    InvalidPageCategory,
    PageFull,
    PageNotFound,
)
from workspace_memory.turns.admission import (
    ConversationBound,
    InvalidAdmission,
    KeySessionInvalid,
    KeySessionRequired,
)
from workspace_memory.turns.capture import InvalidEdits, ProposalCleared
from workspace_memory.turns.notes import (
    AdmissionRequired,
    AdmissionRetired,
    NotesConflict,
    NotesTooLarge,
    SessionNotFound,
)
from workspace_memory.turns.service import TurnNotFound
from workspace_memory.workspaces.import_errors import (
    ImportNotFound,
    ImportNotRunning,
    ImportTargetNotEmpty,
    InvalidArchive,
    InvalidImportId,
    WorkspaceImporting,
)
from workspace_memory.workspaces.keysessions import KeySessionNotFound, ScopeExceedsRole

Errors = tuple[type[errors.DomainError], ...]

# -- the errors each route can raise, beyond those every route can give (COMMON_ERRORS) -------------------
_MEMBER: Errors = (errors.WorkspaceNotFound, errors.Forbidden)
_BASE: Errors = (errors.StaleBaseVersion, errors.Conflict, errors.PreconditionRequired)
_ADMISSION: Errors = (InvalidAdmission, errors.ScopeNotGranted, errors.AiDisabled, errors.WorkspaceNotFound)
_NOTES: Errors = (AdmissionRequired, AdmissionRetired, InvalidAdmission, SessionNotFound)
_ADMIT: Errors = (
    errors.WorkspaceNotFound,
    errors.AiDisabled,
    KeySessionInvalid,
    KeySessionRequired,
    errors.IdempotencyKeyReused,
    ConversationBound,
    errors.NotFound,  # a resend whose admission has expired meanwhile (`NOT_FOUND`)
)

_ENTRY: Errors = (errors.EntryNotFound, errors.EntryForgotten)
_ENTRY_TEXT: Errors = (errors.InvalidEntryKey, errors.InvalidSourceRef, errors.PayloadTooLarge)
_ENTRY_MOVE: Errors = (errors.EntryCap, errors.StaleRevision, errors.Conflict)
_ENTRY_MARK: Errors = (*_MEMBER, *_ENTRY, errors.StaleRevision, errors.Conflict, errors.BaseRevisionRequired)

_PAGE: Errors = (*_MEMBER, PageNotFound, errors.StaleRevision)
_PAGE_FILE: Errors = (*_PAGE, *_ENTRY, EntryAlreadyFiled, FilingScopeMismatch, PageFull)

ROUTE_ERRORS: dict[str, Errors] = {
    "GET /v1/health": (),
    "GET /v1/openapi.json": (),
    "GET /v1/docs": (),
    "GET /app/": (),
    "GET /app/{file}": (errors.AssetNotFound,),
    "POST /v1/workspaces": (),
    "GET /v1/workspaces": (),
    "GET /v1/workspaces/{ws}": (errors.WorkspaceNotFound,),
    "PUT /v1/workspaces/{ws}/members/{userId}": _MEMBER,
    "PUT /v1/workspaces/{ws}/ai": (*_MEMBER, errors.Conflict),
    "POST /v1/workspaces/{ws}/key-sessions": (
        *_MEMBER,
        errors.AiDisabled,
        ScopeExceedsRole,
        errors.InvalidKeySessionBinding,
    ),
    "GET /v1/workspaces/{ws}/key-sessions": (errors.WorkspaceNotFound,),
    "DELETE /v1/workspaces/{ws}/key-sessions/{keySessionId}": (*_MEMBER, KeySessionNotFound),
    "GET /v1/workspaces/{ws}/memory/policy": _MEMBER,
    "PUT /v1/workspaces/{ws}/memory/policy": (*_MEMBER, errors.StalePolicyRevision),
    "GET /v1/workspaces/{ws}/memory": _MEMBER,
    "PUT /v1/workspaces/{ws}/memory": (*_MEMBER, *_BASE, errors.PayloadTooLarge),
    "POST /v1/workspaces/{ws}/memory/clear": (*_MEMBER, *_BASE),
    "POST /v1/workspaces/{ws}/memory/undo": (*_MEMBER, *_BASE, errors.VersionNotFound, errors.VersionPurged),
    "GET /v1/workspaces/{ws}/memory/versions": _MEMBER,
    "GET /v1/workspaces/{ws}/memory/versions/{version}": (*_MEMBER, errors.VersionNotFound, errors.VersionPurged),
    "POST /v1/workspaces/{ws}/memory/proposals/apply": (*_MEMBER, *_BASE, ProposalCleared, InvalidEdits),
    "POST /v1/workspaces/{ws}/memory/purge": (*_MEMBER, LineInHead),
    "GET /v1/workspaces/{ws}/retention": _MEMBER,
    "PUT /v1/workspaces/{ws}/retention": _MEMBER,
    "POST /v1/conversations/{conv}/turns": _ADMIT,
    "GET /v1/conversations/{conv}/turns/{turnId}": (errors.ConversationNotFound, TurnNotFound),
    "GET /v1/conversations/{conv}/memory-receipts": (errors.ConversationNotFound,),
    "POST /v1/automation/conversations/{conv}/admissions": _ADMIT,
    "GET /v1/automation/workspaces/{ws}/memory": _ADMISSION,
    "PUT /v1/automation/workspaces/{ws}/memory": (
        *_ADMISSION,
        InvalidEdits,
        errors.IdempotencyKeyReused,
        errors.RedactedToNothing,
    ),
    "PUT /v1/automation/workspaces/{ws}/entries": (
        *_ADMISSION,
        *_ENTRY_TEXT,
        PersonalDataInKey,
        errors.InvalidAgentName,
        errors.RedactedToNothing,
        errors.IdempotencyKeyReused,
        errors.QuoteRequired,
        errors.QuoteNotInMessage,
        errors.QuoteTooShort,
        errors.RuleNotInQuote,
        errors.EntryCap,
        errors.StaleRevision,
        errors.EntryPinned,
        errors.SourceForgotten,
        errors.OutsideKeySessionBinding,
        errors.RateLimited,
        RateRaced,
    ),
    "GET /v1/automation/workspaces/{ws}/entries": (
        *_ADMISSION,
        AdmissionRetired,
        errors.MemoryOff,
        errors.InvalidEntryKey,
        errors.UnknownParameter,
    ),
    "GET /v1/automation/workspaces/{ws}/entries/{entryId}": (
        *_ADMISSION,
        *_ENTRY,
        AdmissionRetired,
        errors.MemoryOff,
    ),
    "POST /v1/automation/workspaces/{ws}/entries/{entryId}/verify": (
        *_ADMISSION,
        *_ENTRY,
        errors.EntryPinned,
        errors.StaleRevision,
        errors.EvidenceNotCurrent,
        errors.Conflict,
        errors.RateLimited,
        RateRaced,
    ),
    "POST /v1/automation/workspaces/{ws}/entries/{entryId}/forget": (
        *_ADMISSION,
        *_ENTRY,
        errors.IdempotencyKeyReused,
        errors.EntryPinned,
        errors.RateLimited,
        RateRaced,
    ),
    "GET /v1/automation/workspaces/{ws}/search": (
        *_ADMISSION,
        AdmissionRetired,
        errors.MemoryOff,
        errors.UnknownParameter,
    ),
    "GET /v1/automation/sessions/{sid}/notes": _NOTES,
    "PUT /v1/automation/sessions/{sid}/notes": (*_NOTES, NotesConflict, NotesTooLarge, errors.RedactedToNothing),
    "DELETE /v1/automation/sessions/{sid}/notes": _NOTES,
    "DELETE /v1/workspaces/{ws}": (*_MEMBER, errors.ConfirmationRequired, errors.ConfirmationMismatch),
    "POST /v1/workspaces/{ws}/entries": (
        *_MEMBER,
        *_ENTRY_TEXT,
        PersonalDataInKey,
        errors.InvalidAgentName,
        errors.EntryCap,
        errors.StaleRevision,
    ),
    "GET /v1/workspaces/{ws}/entries": (*_MEMBER, errors.InvalidEntryKey),
    "GET /v1/workspaces/{ws}/entries/{entryId}": (*_MEMBER, *_ENTRY),
    "PUT /v1/workspaces/{ws}/entries/{entryId}": (
        *_MEMBER,
        *_ENTRY,
        *_ENTRY_TEXT,
        *_ENTRY_MOVE,
        errors.BaseRevisionRequired,
    ),
    "POST /v1/workspaces/{ws}/entries/{entryId}/revert": (
        *_MEMBER,
        *_ENTRY,
        *_ENTRY_MOVE,
        errors.BaseRevisionRequired,
        errors.RevisionNotFound,
        errors.RevertToCurrent,
    ),
    "PUT /v1/workspaces/{ws}/entries/{entryId}/pin": _ENTRY_MARK,
    "DELETE /v1/workspaces/{ws}/entries/{entryId}/pin": _ENTRY_MARK,
    "POST /v1/workspaces/{ws}/entries/{entryId}/verify": _ENTRY_MARK,
    "DELETE /v1/workspaces/{ws}/entries/{entryId}": (*_MEMBER, *_ENTRY),
    "GET /v1/workspaces/{ws}/entries/{entryId}/history": (*_MEMBER, *_ENTRY),
    "DELETE /v1/workspaces/{ws}/members/{userId}/entries": _MEMBER,
    "DELETE /v1/workspaces/{ws}/agent-memories": (*_MEMBER, errors.Conflict),
    "GET /v1/workspaces/{ws}/candidates": _MEMBER,
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/accept": (
        *_MEMBER,
        *_ENTRY,
        errors.CandidateNotFound,
        *_ENTRY_MOVE,
        errors.EntryPinned,
    ),
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/reject": (*_MEMBER, errors.CandidateNotFound),
    "GET /v1/workspaces/{ws}/pages": (errors.WorkspaceNotFound,),
    "POST /v1/workspaces/{ws}/pages": (*_MEMBER, InvalidPageCategory),
    "GET /v1/workspaces/{ws}/pages/{pageId}": (errors.WorkspaceNotFound, PageNotFound),
    "PATCH /v1/workspaces/{ws}/pages/{pageId}": (*_PAGE, InvalidPageCategory),
    "DELETE /v1/workspaces/{ws}/pages/{pageId}": _PAGE,
    "PUT /v1/workspaces/{ws}/pages/{pageId}/entries/{entryId}": _PAGE_FILE,
    "DELETE /v1/workspaces/{ws}/pages/{pageId}/entries/{entryId}": (*_PAGE, EntryNotFiled),
    "PUT /v1/workspaces/{ws}/page-categories": (*_MEMBER, InvalidPageCategory, errors.StaleRevision),
    "GET /v1/workspaces/{ws}/search": (errors.WorkspaceNotFound, errors.InvalidEntryKey, errors.UnknownParameter),
    "GET /v1/workspaces/{ws}/deletion": (errors.WorkspaceNotFound,),
    "GET /v1/workspaces/{ws}/audit": (errors.WorkspaceNotFound, errors.Forbidden),
    "POST /v1/automation/workspaces/{ws}/deletion/branch-key": (errors.WorkspaceNotDeleted,),
    "POST /v1/automation/workspaces/{ws}/deletion/batches": (errors.WorkspaceNotDeleted,),
    "POST /v1/workspaces/{ws}/members/{userId}/erasure": (
        errors.WorkspaceNotFound,
        errors.Forbidden,
        errors.ConfirmationRequired,
        errors.ConfirmationMismatch,
        errors.MemberNotFound,
        errors.OwnerNotErasable,
    ),
    "GET /v1/workspaces/{ws}/erasures/{erasureId}": (errors.ErasureNotFound,),
    "GET /v1/workspaces/{ws}/consolidation": _MEMBER,
    "PUT /v1/workspaces/{ws}/consolidation": (*_MEMBER, errors.StaleRevision),
    "POST /v1/workspaces/{ws}/consolidation/runs": (*_MEMBER, errors.Conflict),
    "POST /v1/workspaces/{ws}/search/reindex": (errors.WorkspaceNotFound, errors.Forbidden),
    "POST /v1/workspaces/{ws}/mentions": (errors.WorkspaceNotFound, errors.Forbidden),
    "GET /v1/workspaces/{ws}/consolidation/runs": (errors.WorkspaceNotFound, errors.Forbidden),
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/pairs": (
        errors.WorkspaceNotFound,
        WorkspaceImporting,
    ),
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/proposals": (errors.InvalidInput,),
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/finish": (errors.InvalidInput,),
    "POST /v1/automation/workspaces/{ws}/erasures/{erasureId}/steps": (
        errors.ErasureNotFound,
        errors.WorkspaceNotFound,
    ),
    "POST /v1/workspaces/{ws}/exports": (errors.WorkspaceNotFound, errors.Forbidden, errors.InvalidExportScope),
    "GET /v1/workspaces/{ws}/exports/{exportId}": (
        errors.WorkspaceNotFound,
        errors.InvalidExportId,
        errors.ExportNotFound,
    ),
    "GET /v1/workspaces/{ws}/exports/{exportId}/archive": (
        errors.WorkspaceNotFound,
        errors.InvalidExportId,
        errors.ExportNotFound,
        errors.ExportNotReady,
        errors.ExportDownloaded,
        errors.ExportTooLarge,
    ),
    "POST /v1/automation/workspaces/{ws}/exports/{exportId}/files": (errors.InvalidExportId, errors.ExportNotRunning),
    "POST /v1/automation/workspaces/{ws}/exports/{exportId}/finish": (errors.InvalidExportId, errors.ExportNotRunning),
    "POST /v1/workspaces/{ws}/imports": (
        errors.WorkspaceNotFound,
        errors.Forbidden,
        InvalidArchive,
        ImportTargetNotEmpty,
        ImportNotRunning,
        WorkspaceImporting,
    ),
    "GET /v1/workspaces/{ws}/imports/{importId}": (errors.WorkspaceNotFound, InvalidImportId, ImportNotFound),
    "POST /v1/automation/workspaces/{ws}/imports/{importId}/files": (InvalidImportId, InvalidArchive, ImportNotRunning),
    "POST /v1/automation/workspaces/{ws}/imports/{importId}/finish": (InvalidImportId, ImportNotRunning),
}
"""Keyed by template route. The statuses come from `STATUS_BY_ERROR`; the codes listed are the classes'."""


def status_of(error: type[errors.DomainError]) -> int:
    """The status `workspace_memory.api.errors` answers for this class (the first base it lists)."""
    return next((status for cls, status in STATUS_BY_ERROR if issubclass(error, cls)), 500)


COMMON_ERRORS: tuple[tuple[int, str], ...] = ((500, INTERNAL), *((status_of(e), e.code) for e in ANY_ROUTE))
"""What any route can answer: a bug, the plumbing's own refusals, and the store being down."""


def error_statuses(route: Route) -> dict[int, list[str]]:
    """Status -> the error codes behind it, for this route: the common ones and its own (ROUTE_ERRORS)."""
    found: dict[int, list[str]] = {}
    for status, common in COMMON_ERRORS:
        found.setdefault(status, []).append(common)
    for error in ROUTE_ERRORS.get(route.route_key, ()):
        codes = found.setdefault(status_of(error), [])
        if error.code not in codes:
            codes.append(error.code)
    return found
