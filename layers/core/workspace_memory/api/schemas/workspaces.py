"""The workspaces' request bodies: creating one, members, AI, consolidation, key sessions."""

from __future__ import annotations

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.terms import EntryScope, EntryType, Role, Scope, ShareType


class CreateWorkspace(ApiModel):
    name: str = Field(min_length=1, max_length=200)
    share_type: ShareType


class PutMember(ApiModel):
    role: Role


class SetAi(ApiModel):
    enabled: bool


class SetConsolidation(ApiModel):
    """The owner's opt-in to scheduled consolidation, by compare-and-set on the settings' revision."""

    enabled: bool
    auto_file: bool | None = Field(
        default=None, description="Whether filing proposals may be applied without review; left out: kept."
    )
    expected_revision: int = Field(ge=0)


class KeySessionBind(ApiModel):
    """The context a key session is bound to (docs/decisions/0077): each field left out binds nothing. Its content
    is judged by the service, so every problem answers one code (400 `INVALID_KEY_SESSION_BINDING`): a `bind`
    naming nothing, an empty list, more than 4 key prefixes, or a prefix that cannot start an entry key."""

    scopes: list[EntryScope] | None = Field(
        default=None, description="Entry scopes the session's agents may touch (`workspace`, `member`, `agent`)."
    )
    types: list[EntryType] | None = Field(default=None, description="Entry types they may touch.")
    key_prefixes: list[str] | None = Field(
        default=None,
        description=(
            "At most 4 starts of entry keys (`ops/`, `ops/db`; 1-96 characters): an entry without a key, or whose "
            "key starts with none of them, is outside. Sealed, never stored in clear."
        ),
    )


class OpenKeySession(ApiModel):
    ttl_seconds: int | None = None
    scopes: list[Scope] | None = Field(default=None, min_length=1, max_length=3)
    """Default `memory:read` only; a viewer may delegate nothing else (403 `SCOPE_EXCEEDS_ROLE`)."""
    bind: KeySessionBind | None = None
    """Absent: the session is not bound (its agents see and write what the member's turn would)."""
