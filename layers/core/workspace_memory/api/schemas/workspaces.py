"""The workspaces' request bodies: creating one, members, AI, key sessions."""

from __future__ import annotations

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.terms import Role, Scope, ShareType


class CreateWorkspace(ApiModel):
    name: str = Field(min_length=1, max_length=200)
    share_type: ShareType


class PutMember(ApiModel):
    role: Role


class SetAi(ApiModel):
    enabled: bool


class OpenKeySession(ApiModel):
    ttl_seconds: int | None = None
    scopes: list[Scope] | None = Field(default=None, min_length=1, max_length=3)
    """Default `memory:read` only; a viewer may delegate nothing else (403 `SCOPE_EXCEEDS_ROLE`)."""
