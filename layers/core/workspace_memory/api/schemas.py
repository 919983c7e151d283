"""Request models of the public HTTP API (camelCase, unknown fields rejected); the responses are in `models`."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from workspace_memory.api.models import ApiModel
from workspace_memory.deletion_contract import MAX_BATCH_SIZE
from workspace_memory.errors import InvalidInput, PreconditionRequired
from workspace_memory.ids import Identifier, IssuedId
from workspace_memory.terms import MemoryState, Mode, Role, Scope, ShareType


class CreateWorkspace(ApiModel):
    name: str = Field(min_length=1, max_length=200)
    share_type: ShareType


class PurgeBatch(ApiModel):
    """One purge step of a deleted workspace: at most `limit` items."""

    limit: int = Field(ge=1, le=MAX_BATCH_SIZE)


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
    history_days: int = Field(ge=1, le=365)


class PurgeLine(ApiModel):
    line: str
    """Checked by the service (1-500 UTF-8 bytes, no newline), never echoed in an error."""


class OpenKeySession(ApiModel):
    ttl_seconds: int | None = None
    scopes: list[Scope] | None = Field(default=None, min_length=1, max_length=3)


class Admit(ApiModel):
    workspace_id: IssuedId
    user_id: IssuedId
    idempotency_key: Identifier
    memory_state: MemoryState | None = None
    key_session_id: IssuedId | None = None
    session_id: Identifier | None = None


class Capture(ApiModel):
    admission_id: str = Field(min_length=1, max_length=1024)
    credential: str = Field(min_length=1, max_length=200)
    edits: list[dict[str, Any]] = Field(max_length=50)
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


def parse_base_version(raw: str | None) -> int:
    """`X-Base-Version`: a non-negative decimal integer; absent is a distinct error (428)."""
    if raw is None or raw.strip() == "":
        raise PreconditionRequired("X-Base-Version header is required")
    text = raw.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 12:
        raise InvalidInput("X-Base-Version must be a non-negative integer")
    return int(text)
