"""Request models of the public HTTP API (camelCase, unknown fields rejected); the responses are in `models`."""

from __future__ import annotations

import calendar
import re
import time
from typing import Annotated, Any

from pydantic import Field, ValidationError, ValidatorFunctionWrapHandler, WrapValidator, model_validator
from pydantic_core import PydanticCustomError

from workspace_memory.api.errors import refused
from workspace_memory.api.models.base import ApiModel
from workspace_memory.document.edits import MALFORMED_EDITS, Edit, InvalidEdits
from workspace_memory.kernel.errors import BaseRevisionRequired, InvalidExportScope, InvalidInput, PreconditionRequired
from workspace_memory.kernel.ids import Identifier, IssuedId
from workspace_memory.kernel.terms import (
    CitationKind,
    EntryScope,
    EntryType,
    ExportFile,
    ExportScope,
    MemoryState,
    Mode,
    Role,
    Scope,
    ShareType,
)
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.turn_contract import TURN_ID_PATTERN
from workspace_memory.workspaces.deletion_contract import MAX_BATCH_SIZE
from workspace_memory.workspaces.erasure_contract import MAX_STEP_AFTER
from workspace_memory.workspaces.erasure_contract import Phase as ErasurePhase


class CreateWorkspace(ApiModel):
    name: str = Field(min_length=1, max_length=200)
    share_type: ShareType


class PurgeBatch(ApiModel):
    """One purge step of a deleted workspace: at most `limit` items."""

    limit: int = Field(ge=1, le=MAX_BATCH_SIZE)
    cleared: list[Annotated[str, Field(pattern=TURN_ID_PATTERN)]] = Field(default=[], max_length=MAX_BATCH_SIZE)
    """Turns whose Temporal executions the workflow deleted: their admissions go in this batch."""


class ErasureStep(ApiModel):
    """One step of a member's erasure: its phase, and where the previous step of that phase stopped."""

    phase: ErasurePhase
    after: str | None = Field(default=None, min_length=1, max_length=MAX_STEP_AFTER)


class FindMentions(ApiModel):
    """A person's name, their e-mail: what to look for (personal data: a body, never a query string)."""

    terms: list[Annotated[str, Field(min_length=3, max_length=200, pattern=r"\S")]] = Field(min_length=1, max_length=10)


class PutMember(ApiModel):
    role: Role


class SetAi(ApiModel):
    enabled: bool


class SetPolicy(ApiModel):
    mode: Mode
    expected_revision: int = Field(ge=0)


class SaveDocument(ApiModel):
    content: str


class Undo(ApiModel):
    restore_version: int = Field(ge=1)


class PutRetention(ApiModel):
    """Either window or both; one left out keeps its value."""

    history_days: int | None = Field(default=None, ge=1, le=365)
    agent_days: int | None = Field(default=None, ge=1, le=365)

    @model_validator(mode="after")
    def _some_window(self) -> PutRetention:
        if self.history_days is None and self.agent_days is None:
            raise ValueError("historyDays or agentDays is required")
        return self


class PurgeLine(ApiModel):
    line: str
    """Checked by the service (1-500 UTF-8 bytes, no newline), never echoed in an error."""


class OpenKeySession(ApiModel):
    ttl_seconds: int | None = None
    scopes: list[Scope] | None = Field(default=None, min_length=1, max_length=3)
    """Default `memory:read` only; a viewer may delegate nothing else (403 `SCOPE_EXCEEDS_ROLE`)."""


class Admit(ApiModel):
    workspace_id: IssuedId
    user_id: IssuedId
    idempotency_key: Identifier
    memory_state: MemoryState | None = None
    key_session_id: IssuedId | None = None
    session_id: Identifier | None = None
    message: str | None = Field(default=None, min_length=1, max_length=32 * 1024)
    """The turn's user message, kept sealed on the admission: what an agent's rule must quote
    (docs/architecture.md#rules)."""

    def request(self, conversation_id: str) -> AdmissionRequest:
        """The admission an agent runtime asks for, in conversation `conversation_id`, for the body's user."""
        return _admission_request(self, conversation_id, self.user_id)


def _capture_edit(raw: object, validate: ValidatorFunctionWrapHandler) -> Edit:
    """One edit of a capture. What is not a JSON object fails the schema, as a wrong type does anywhere; an
    object that is not an edit is refused as INVALID_EDITS, without pydantic's message (it would quote text)."""
    if not isinstance(raw, dict):
        raise PydanticCustomError("dict_type", "Input should be a valid dictionary")
    try:
        edit: Edit = validate(raw)
    except ValidationError:
        raise refused(InvalidEdits(MALFORMED_EDITS)) from None
    return edit


CaptureEdit = Annotated[Edit, WrapValidator(_capture_edit)]
"""An edit as the agent's write tool sends it: add{line,heading?}, replace{old,new} or remove{line}."""


class Capture(ApiModel):
    admission_id: str = Field(min_length=1, max_length=1024)
    credential: str = Field(min_length=1, max_length=200)
    edits: list[CaptureEdit] = Field(max_length=50)
    """At most 50 here; how many one capture may make (5) and whether each applies are the document's rules,
    answered as INVALID_EDITS with their `problems`."""
    base_version: int = Field(ge=0)


class ProposalIn(ApiModel):
    edits: list[dict[str, Any]] = Field(max_length=50)
    base_version: int = Field(ge=0)
    clear_generation: int = Field(ge=0)


class ApplyProposal(ApiModel):
    proposal: ProposalIn


class PutNotes(ApiModel):
    notes: str


class StartTurn(ApiModel):
    workspace_id: IssuedId
    message: str = Field(min_length=1, max_length=32 * 1024)
    idempotency_key: Identifier
    memory_state: MemoryState | None = None
    key_session_id: IssuedId | None = None
    session_id: Identifier | None = None

    def request(self, conversation_id: str, user_id: str) -> AdmissionRequest:
        """The admission the signed-in `user_id` asks for, for a turn in conversation `conversation_id`."""
        return _admission_request(self, conversation_id, user_id)


def _admission_request(body: Admit | StartTurn, conversation_id: str, user_id: str) -> AdmissionRequest:
    """The one place a body of either admission route becomes the `AdmissionRequest` passed down."""
    return AdmissionRequest(
        conversation_id=conversation_id,
        workspace_id=body.workspace_id,
        user_id=user_id,
        idempotency_key=body.idempotency_key,
        memory_state=body.memory_state,
        key_session_id=body.key_session_id,
        session_id=body.session_id,
        message=body.message,
    )


class SourceIn(ApiModel):
    kind: CitationKind
    ref: str = Field(min_length=1, max_length=400)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    locator: str = Field(default="", max_length=800)


class EntryFields(ApiModel):
    """A revision's fields; sizes (title 120 B, summary 200 B, body 4 KiB) are the service's to check."""

    type: EntryType
    title: str = Field(max_length=1000)
    summary: str = Field(max_length=1000)
    body: str = Field(default="", max_length=16 * 1024)
    sources: list[SourceIn] = Field(default_factory=list, max_length=20)


class CreateEntry(EntryFields):
    scope: EntryScope
    key: str | None = Field(default=None, max_length=300)
    agent: Identifier | None = None


class SaveEntry(EntryFields):
    """An agent's entry write (`save_memory`): scope `workspace` (default), `agent`, or `member` (the admission's
    user's own); a key in use supersedes its chain; a rule needs `quote`."""

    scope: EntryScope = EntryScope.WORKSPACE
    key: str | None = Field(default=None, max_length=300)
    agent: Identifier | None = None
    quote: str | None = Field(default=None, max_length=2000)


class SupersedeEntry(EntryFields):
    """Scope, key and agent are the chain's: a revision changes type and text only."""

    reason: str | None = Field(default=None, max_length=1000)


class RevertEntry(ApiModel):
    """The earlier revision whose text the new revision takes."""

    revision: int = Field(ge=1)


class DecideCandidate(ApiModel):
    revision: int = Field(ge=1)


AS_OF = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")


def parse_time(raw: str | None, name: str) -> float | None:
    """A query's time (`asOf`, `since`, `until`): an RFC 3339 UTC time (`2026-01-01T00:00:00Z`, optional
    fraction), in epoch seconds."""
    if raw is None:
        return None
    refusal = f"{name} must be an RFC 3339 UTC time such as 2026-01-01T00:00:00Z"
    if not AS_OF.fullmatch(raw):
        raise InvalidInput(refusal)
    try:
        whole = calendar.timegm(time.strptime(raw[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        raise InvalidInput(refusal) from None
    fraction = raw[19:-1]
    return whole + (float(fraction) if fraction else 0.0)


def parse_as_of(raw: str | None) -> float | None:
    """`asOf`: an RFC 3339 UTC time."""
    return parse_time(raw, "asOf")


def parse_base_revision(raw: str | None) -> int:
    """`X-Base-Revision`: a positive decimal integer; absent is a distinct error (428)."""
    if raw is None or raw.strip() == "":
        raise BaseRevisionRequired("X-Base-Revision header is required")
    text = raw.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 12 or int(text) < 1:
        raise InvalidInput("X-Base-Revision must be a positive integer")
    return int(text)


def parse_base_version(raw: str | None) -> int:
    """`X-Base-Version`: a non-negative decimal integer; absent is a distinct error (428)."""
    if raw is None or raw.strip() == "":
        raise PreconditionRequired("X-Base-Version header is required")
    text = raw.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 12:
        raise InvalidInput("X-Base-Version must be a non-negative integer")
    return int(text)


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
