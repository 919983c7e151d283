"""The domain's vocabulary: its enumerations and the client's memory state, in a leaf module.

The services use these, and so do the wire models and the worker; keeping them here lets a handler import
its request and response models without importing the services behind them (cold start).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

SEARCH_DEFAULT_K = 5
SEARCH_MAX_K = 20
"""A search answers 1 to `SEARCH_MAX_K` entries (docs/architecture.md#search-routes); the routes declare these bounds,
the service checks them (`entry_search`)."""
MAX_EVIDENCE = 5
"""An agent's verification cites 1 to `MAX_EVIDENCE` sources (decisions/0079): the route, the MCP tool and the turn's
`verify_memory` declare it, the service checks it (`agent_verify`)."""


class Role(StrEnum):
    OWNER = "owner"
    EDITOR = "editor"
    VIEWER = "viewer"


class ShareType(StrEnum):
    SHARED = "shared"
    PRIVATE = "private"


class Predicate(StrEnum):
    """The fence predicates a refused capture names (stable, part of the API)."""

    ADMISSION = "admission"
    POLICY = "policy"
    CONSENT = "consent"
    CREDENTIAL = "credential"
    KEY_SESSION = "key_session"
    HEAD = "head"
    OVERSIZED = "oversized"
    ACCESS = "access"


class Outcome(StrEnum):
    COMMITTED = "committed"
    PROPOSAL = "proposal"
    NOOP = "noop"
    CONFLICT = "conflict"
    REFUSED = "refused"


class RedactionKind(StrEnum):
    """What redaction finds (docs/architecture.md#redaction); the marker is `[redacted:<kind>]`. Declaration order is
    precedence: when findings of two kinds overlap, the merged span is named by the earlier kind."""

    PRIVATE_KEY = "private_key"
    JWT = "jwt"
    CLOUD_KEY = "cloud_key"
    API_TOKEN = "api_token"  # noqa: S105 - the name of a kind, not a secret
    BEARER_TOKEN = "bearer_token"  # noqa: S105
    SECRET = "secret"  # noqa: S105
    CARD = "card"
    IBAN = "iban"
    EMAIL = "email"
    PHONE = "phone"


class Mode(StrEnum):
    OFF = "off"
    READ_ONLY = "read_only"
    AUTO = "auto"


class Scope(StrEnum):
    """What a delegation lets an agent runtime do on the user's behalf."""

    MEMORY_READ = "memory:read"
    MEMORY_WRITE = "memory:write"
    NOTES = "notes"


class RecallStatus(StrEnum):
    OK = "ok"
    EMPTY = "empty"
    OFF = "off"
    OVERSIZED = "oversized"
    PENDING = "pending"
    CONFLICT = "conflict"
    STALE = "stale"
    DELETED = "deleted"
    UNAVAILABLE = "unavailable"
    NO_ACCESS = "no_access"
    SUPERSEDED = "superseded"


class MemoryWrite(StrEnum):
    """What a write tool could do in this turn right now: the model is offered one only if not `none`."""

    COMMIT = "commit"
    PROPOSE = "propose"
    NONE = "none"


class MemoryState(BaseModel):
    """The client's view of its own saves. An unsaved editor draft is never reported."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state: Literal["saved", "pending", "conflict"]
    version: int | None = None

    def model_post_init(self, __context: Any) -> None:
        if (self.state == "saved") != (self.version is not None and self.version >= 0):
            raise ValueError("memoryState.version is required for (and only for) state 'saved'")


class EntryScope(StrEnum):
    """Who an entry belongs to (docs/architecture.md#scopes-and-visibility): the workspace, one member (private), or one
    agent persona."""

    WORKSPACE = "workspace"
    MEMBER = "member"
    AGENT = "agent"


class PageScope(StrEnum):
    """Who may read a page (docs/architecture.md#pages): every member, or only the member who owns it."""

    WORKSPACE = "workspace"
    PRIVATE = "private"


class EntryType(StrEnum):
    FACT = "fact"
    RULE = "rule"
    PREFERENCE = "preference"
    REFERENCE = "reference"


class EntryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"


class CitationKind(StrEnum):
    ENTRY = "entry"
    DOCUMENT_VERSION = "document-version"


class CitationState(StrEnum):
    """A citation re-checked on read: the cited text still hashes the same, differs, or cannot be seen."""

    OK = "ok"
    CHANGED = "changed"
    HIDDEN = "hidden"


class CandidateStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class RejectedFor(StrEnum):
    """Why a candidate was rejected by the service rather than by a person (absent: a person's decision)."""

    ENTRY_FORGOTTEN = "entry-forgotten"
    """The chain it names, or the turn it came from, was forgotten: its text went with it (decisions/0074)."""


class ConsolidationRule(StrEnum):
    """Why consolidation proposed a change (the evidence a candidate keeps, beside the ids it read)."""

    DUPLICATE_NEWER_KEPT = "duplicate-newer-kept"
    """The same statement twice: the older chain is retired into the newer one."""
    CONFLICT_NEWER_WINS = "conflict-newer-wins"
    """Two claims about one subject: the newer is current, the older superseded by it (freshness)."""


class CandidateKind(StrEnum):
    """What a candidate proposes: an entry write (`save_memory` in `read_only`) or forgetting a chain
    (`forget_memory`, in any mode but `off`: forgetting is never automatic). Absent on an item: `save`."""

    SAVE = "save"
    FORGET = "forget"
    MERGE = "merge"
    """Consolidation: the chain is the same statement as a newer one (`keeperId`); accepting retires it into that."""
    SUPERSEDE = "supersede"
    """Consolidation: a newer chain (`keeperId`) claims otherwise about the same subject; accepting retires this
    one, superseded by it (freshness wins), its history kept."""


class AuditKind(StrEnum):
    """What an audit event is about (`store/audit_trail.py` derives them from a transaction's changes)."""

    WORKSPACE = "workspace"
    MEMBER = "member"
    CONSENT = "consent"
    POLICY = "policy"
    RETENTION = "retention"
    DOCUMENT = "document"
    ENTRY = "entry"
    CANDIDATE = "candidate"
    KEY_SESSION = "key-session"
    NOTES = "notes"
    TURN = "turn"
    ERASURE = "erasure"
    EXPORT = "export"
    IMPORT = "import"
    CONSOLIDATION = "consolidation"
    """The owner's opt-in to (or out of) scheduled consolidation."""
    CONSOLIDATION_RUN = "consolidation-run"
    """A consolidation run the owner asked for."""
    PAGE = "page"
    PAGE_CATEGORIES = "page-categories"


class AuditOp(StrEnum):
    """What an audit event says was done (besides a member's new role and a policy's new mode, which are
    named by `Role` and `Mode`): fixed words, never free text."""

    SAVE = "save"
    CLEAR = "clear"
    UNDO = "undo"
    CAPTURE = "capture"
    PURGE = "purge"
    CREATED = "created"
    REVISED = "revised"
    FORGOTTEN = "forgotten"
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    OPENED = "opened"
    REVOKED = "revoked"
    WRITTEN = "written"
    ADMITTED = "admitted"
    SET = "set"
    AI_ON = "ai-on"
    AI_OFF = "ai-off"
    DELETED = "deleted"
    PINNED = "pinned"
    UNPINNED = "unpinned"
    VERIFIED = "verified"
    REQUESTED = "requested"
    COMPLETED = "completed"
    DOWNLOADED = "downloaded"
    APPLIED = "applied"
    RETIRED = "retired"
    """A chain superseded by another, as a person accepted a consolidation proposal."""
    OPTED_IN = "opted-in"
    OPTED_OUT = "opted-out"
    FILED = "filed"
    UNFILED = "unfiled"


class ActorKind(StrEnum):
    """Who acted: a person through a human route, or an agent (a turn's tools or a key session)."""

    PERSON = "person"
    AGENT = "agent"
    SERVICE = "service"
    """The service itself: consolidation's proposals (`CONSOLIDATION_AUTHOR`)."""


CONSOLIDATION_AUTHOR = "consolidation"
"""Who proposed a consolidation candidate (`proposedBy`): the service itself, never a member or an agent."""


class ExportScope(StrEnum):
    """What an export holds (docs/decisions/0068): `me`, the requester's own data in the workspace; `workspace`,
    the owner's export of the whole workspace (never another member's private data)."""

    ME = "me"
    WORKSPACE = "workspace"


class RunStatus(StrEnum):
    """A consolidation run's record: started (and maybe resumed after a worker died), or done."""

    RUNNING = "running"
    DONE = "done"


class ExportStatus(StrEnum):
    """An export's life: `running` (files being written), `ready` (downloadable once), `downloaded` (its files
    deleted by the download), `too_large` (past the archive limit: nothing kept)."""

    RUNNING = "running"
    READY = "ready"
    DOWNLOADED = "downloaded"
    TOO_LARGE = "too_large"


class ImportStatus(StrEnum):
    """An import's life: `running` (the archive's files being applied), `completed` (the workspace open)."""

    RUNNING = "running"
    COMPLETED = "completed"


class ExportFile(StrEnum):
    """The files of an export archive: one per kind of data, the Markdown head, and the manifest."""

    DOCUMENTS = "documents.json"
    DOCUMENT_MD = "document.md"
    ENTRIES = "entries.json"
    NOTES = "notes.json"
    KEY_SESSIONS = "key-sessions.json"
    RECEIPTS = "receipts.json"
    POLICY = "policy.json"
    MEMBERS = "members.json"
    RETENTION = "retention.json"
    MANIFEST = "manifest.json"
