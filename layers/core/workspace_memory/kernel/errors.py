"""Domain errors.

Each error carries a stable machine code; the HTTP layer maps the *class* to a status, never the text.
Messages must never contain memory or note text: only ids, versions and sizes.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base of every error the service reports to a caller."""

    code = "INTERNAL"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(DomainError):
    code = "INVALID_REQUEST"


class NotFound(DomainError):
    code = "NOT_FOUND"


class WorkspaceNotFound(NotFound):
    """Also raised for non-members, so they cannot learn whether a workspace exists."""

    code = "WORKSPACE_NOT_FOUND"


class VersionNotFound(NotFound):
    code = "VERSION_NOT_FOUND"


class AssetNotFound(NotFound):
    """The memory frame has no such static file (its files are a fixed list, never a path on disk)."""

    code = "ASSET_NOT_FOUND"


class Gone(DomainError):
    """It existed and was deliberately forgotten: asking again will not bring it back."""

    code = "GONE"


class VersionPurged(Gone):
    """A version stub left by a purge: its number and metadata stay, its text does not."""

    code = "VERSION_PURGED"


class Forbidden(DomainError):
    code = "FORBIDDEN"


class AiDisabled(Forbidden):
    code = "AI_DISABLED"


class ScopeNotGranted(Forbidden):
    """The key session the admission was made under does not grant this kind of access."""

    code = "SCOPE_NOT_GRANTED"


class OutsideKeySessionBinding(Forbidden):
    """An agent write outside the context its key session is bound to (its entry scopes, types or key prefixes;
    docs/decisions/0077): nothing is written. The message names the field, never a key."""

    code = "OUTSIDE_KEY_SESSION_BINDING"


class InvalidKeySessionBinding(InvalidInput):
    """A key session's `bind` that is empty, names nothing, or holds a key prefix that cannot start an entry key
    (or holds what redaction would remove). The message names the field and position, never the prefix."""

    code = "INVALID_KEY_SESSION_BINDING"


class ConversationNotFound(NotFound):
    """Also for a conversation of another user: its owner's and a missing one answer the same bytes."""

    code = "CONVERSATION_NOT_FOUND"


class ConfirmationRequired(InvalidInput):
    """A destructive request without its confirmation header."""

    code = "CONFIRMATION_REQUIRED"


class ConfirmationMismatch(InvalidInput):
    """The confirmation names another workspace (a stale or foreign header): nothing is done."""

    code = "CONFIRMATION_MISMATCH"


class Unauthenticated(DomainError):
    code = "UNAUTHENTICATED"


class Conflict(DomainError):
    code = "CONFLICT"


class WorkspaceNotDeleted(Conflict):
    """The purge refuses a workspace that is not tombstoned: nothing can purge a live workspace."""

    code = "WORKSPACE_NOT_DELETED"


class StaleBaseVersion(Conflict):
    code = "STALE_BASE_VERSION"


class StalePolicyRevision(Conflict):
    code = "STALE_POLICY_REVISION"


class IdempotencyKeyReused(Conflict):
    code = "IDEMPOTENCY_KEY_REUSED"


class PreconditionRequired(DomainError):
    code = "BASE_VERSION_REQUIRED"


class PayloadTooLarge(DomainError):
    code = "PAYLOAD_TOO_LARGE"


class Unavailable(DomainError):
    """The store or KMS failed; callers may retry."""

    code = "UNAVAILABLE"


class DecryptionFailed(Unavailable):
    """A ciphertext did not decrypt under the context of the slot it was read from."""

    code = "DECRYPTION_FAILED"


class EntryNotFound(NotFound):
    """Also for another member's private entry: a missing one and a hidden one answer the same bytes."""

    code = "ENTRY_NOT_FOUND"


class EntryForgotten(Gone):
    """The chain was forgotten: only its text-free tombstone is left."""

    code = "ENTRY_FORGOTTEN"


class CandidateNotFound(NotFound):
    code = "CANDIDATE_NOT_FOUND"


class MemberNotFound(NotFound):
    """Erasing someone who is not a member of the workspace (or no longer is)."""

    code = "MEMBER_NOT_FOUND"


class ErasureNotFound(NotFound):
    """Also for an erasure the caller neither asked for nor owns the workspace of: the same bytes."""

    code = "ERASURE_NOT_FOUND"


class OwnerNotErasable(Conflict):
    """The owner cannot be erased from their own workspace: it would answer to no one (delete it instead)."""

    code = "OWNER_NOT_ERASABLE"


class UnknownParameter(InvalidInput):
    """A query parameter the route does not take (a misspelt filter must not silently widen a search). The
    message never names it: the caller made it up."""

    code = "UNKNOWN_PARAMETER"


class InvalidEntryKey(InvalidInput):
    """A key that is not `namespace/name` of the allowed characters."""

    code = "INVALID_KEY"


class InvalidAgentName(InvalidInput):
    """An agent name (an `agent` entry's scope owner, stored in clear) that is not a lower-case id, or that
    holds what redaction would remove (decisions/0055). The message never repeats the name."""

    code = "INVALID_AGENT_NAME"


class InvalidSourceRef(InvalidInput):
    """A source's `ref` that is not the id its kind cites (an entry id, a document version number): a ref is
    an id, not prose (decisions/0055). The message never repeats the ref."""

    code = "INVALID_SOURCE_REF"


class RedactedToNothing(InvalidInput):
    """An agent's text that was nothing but personal data or secrets would be stored as redaction markers
    alone: a memory of nothing, and the sign of an agent trying to keep a secret. The message names the kinds
    found, never the text."""

    code = "REDACTED_TO_NOTHING"


class StaleRevision(Conflict):
    code = "STALE_REVISION"


class EntryPinned(Conflict):
    """An agent's write (a supersession, a forget, a proposal over the chain, or a person accepting one) meets a
    chain a person pinned: agents may read it, never write over it; unpin it first (decisions/0064)."""

    code = "ENTRY_PINNED"


class SourceForgotten(Conflict):
    """An agent's save cites a source, or comes from a turn, that a forgotten chain drew on: a forgotten fact is
    not saved again from where it came, until the block's window (the workspace's `historyDays`) passes
    (decisions/0074). A person's own write is never refused this way."""

    code = "SOURCE_FORGOTTEN"


class EvidenceNotCurrent(Conflict):
    """An agent's verification cites evidence that does not read now as it was hashed (`changed`) or cannot be
    read (`hidden`): an entry is verified on text that still holds, never on a claim; `states` gives each one."""

    code = "EVIDENCE_NOT_CURRENT"


class RevisionNotFound(NotFound):
    """A revert names a revision the chain does not have (any more: past its retention, or never written)."""

    code = "REVISION_NOT_FOUND"


class RevertToCurrent(InvalidInput):
    """A revert names the current revision: there is nothing to go back to."""

    code = "REVERT_TO_CURRENT"


class EntryCap(Conflict):
    code = "ENTRY_CAP"


class BaseRevisionRequired(PreconditionRequired):
    code = "BASE_REVISION_REQUIRED"


class RateLimited(DomainError):
    """Too many agent writes this hour; `retry_after` seconds until the next hour's bucket."""

    code = "RATE_LIMITED"


class QuoteRequired(InvalidInput):
    """An agent creates or changes a rule only with a quote of the turn's user message (docs/architecture.md#rules)."""

    code = "QUOTE_REQUIRED"


class QuoteNotInMessage(InvalidInput):
    """The quote is not whole sentences of the turn's user message (compared normalised: decisions 0053, 0071)."""

    code = "QUOTE_NOT_IN_MESSAGE"


class QuoteTooShort(InvalidInput):
    """The quote has fewer words or characters than a rule's quote needs (decision 0053)."""

    code = "QUOTE_TOO_SHORT"


class RuleNotInQuote(InvalidInput):
    """The rule says more or less than its quote: its summary and body are the quote, its title words of it (0071)."""

    code = "RULE_NOT_IN_QUOTE"


class MemoryOff(Forbidden):
    """The workspace's memory policy is `off`: an agent reads no entries."""

    code = "MEMORY_OFF"


# -- The MCP server's own refusals (mcp_server/): answered before, or instead of, any call to the API ------------


class InvalidArguments(InvalidInput):
    """A tool call's arguments fail the tool's input schema; nothing was called."""

    code = "INVALID_ARGUMENTS"


class UserTokenRequired(Unauthenticated):
    """A tool that acts as the person (`ask_agent`, `list_entries`) without the person's token."""

    code = "USER_TOKEN_REQUIRED"


class TurnTimeout(Unavailable):
    """A turn `ask_agent` started is still running at the server's deadline; it goes on."""

    code = "TURN_TIMEOUT"


class PathNotAllowed(InvalidInput):
    """A memory-tool path outside `/memories`, or with an empty, `.` or `..` segment."""

    code = "PATH_NOT_ALLOWED"


class PathNotMapped(NotFound):
    """A memory-tool path under `/memories` that names neither the document nor an entry (docs/mcp.md)."""

    code = "PATH_NOT_MAPPED"


class TextNotFound(InvalidInput):
    """A memory-tool `str_replace` whose `old_str` is not in the file."""

    code = "TEXT_NOT_FOUND"


class TextAmbiguous(InvalidInput):
    """A memory-tool `str_replace` whose `old_str` occurs more than once: it must name one place."""

    code = "TEXT_AMBIGUOUS"


class LineOutOfRange(InvalidInput):
    """A memory-tool `insert_line` or `view_range` outside the file."""

    code = "LINE_OUT_OF_RANGE"


class CommandNotSupported(InvalidInput):
    """A memory-tool command this file cannot take (the document is never created, deleted or renamed)."""

    code = "COMMAND_NOT_SUPPORTED"


class InvalidExportScope(InvalidInput):
    """An export's `scope` is neither `me` nor `workspace`."""

    code = "INVALID_EXPORT_SCOPE"


class InvalidExportId(InvalidInput):
    """An export id in a path that is not one the service issues (`ex_` + 24 hex digits)."""

    code = "INVALID_EXPORT_ID"


class ExportNotFound(NotFound):
    """No such export for the caller: missing, expired, or another person's (the same answer for each)."""

    code = "EXPORT_NOT_FOUND"


class ExportNotReady(Conflict):
    """The export's files are still being written: follow its progress, then download."""

    code = "EXPORT_NOT_READY"


class ExportNotRunning(Conflict):
    """A workflow step for an export that is no longer running (finished, downloaded or expired)."""

    code = "EXPORT_NOT_RUNNING"


class ExportDownloaded(Gone):
    """The archive was downloaded already: it is served once, and its files were deleted then."""

    code = "EXPORT_ALREADY_DOWNLOADED"


class ExportTooLarge(PayloadTooLarge):
    """The archive is past what one response may carry (`exports.MAX_ARCHIVE_BYTES`): nothing of it was kept."""

    code = "EXPORT_TOO_LARGE"
