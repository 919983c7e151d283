"""The MCP server's configuration: read from the environment once, at start, and refused whole if wrong."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from workspace_memory.kernel.loopback import is_loopback_host

ENV = {
    "api_url": "WM_API_URL",
    "user_id": "WM_USER_ID",
    "workspace_id": "WM_WORKSPACE_ID",
    "key_session_id": "WM_KEY_SESSION_ID",
    "auth": "WM_AUTH",
    "user_token": "WM_USER_TOKEN",
    "region": "AWS_REGION",
    "conversation_id": "WM_CONVERSATION_ID",
    "ask_timeout_seconds": "WM_ASK_TIMEOUT_SECONDS",
}


class ConfigError(ValueError):
    """The environment cannot run the server; the message names the variables, never their values."""


class McpConfig(BaseModel):
    """Whose delegation the server acts under, where the API is, and how it authenticates.

    `auth=dev`: the local gateway's dev auth (`Bearer dev:<user>` on the turn route, `Bearer automation:mcp`
    on the automation routes), loopback API only. `auth=aws`: the automation routes signed with SigV4 by
    the AWS credentials of the process (a principal the stack lets invoke them), the turn route with the
    person's own JWT from `WM_USER_TOKEN` (without one, `ask_agent` answers `USER_TOKEN_REQUIRED`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_url: str = Field(min_length=1)
    user_id: str = Field(min_length=1, max_length=128)
    workspace_id: str = Field(min_length=1, max_length=128)
    key_session_id: str = Field(min_length=1, max_length=128)
    auth: Literal["dev", "aws"] = "dev"
    user_token: str | None = None
    region: str | None = None
    conversation_id: str = Field(default_factory=lambda: f"mcp-{uuid.uuid4().hex[:16]}", min_length=1, max_length=128)
    ask_timeout_seconds: float = Field(default=120.0, gt=0, le=900)

    @model_validator(mode="after")
    def _consistent(self) -> McpConfig:
        parts = urlsplit(self.api_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("WM_API_URL must be an http(s) URL")
        if self.auth == "dev" and not is_loopback_host(parts.netloc):
            raise ValueError("WM_AUTH=dev speaks the local gateway's dev auth: WM_API_URL must be a loopback URL")
        if self.auth == "aws" and not self.region:
            raise ValueError("WM_AUTH=aws signs with SigV4: AWS_REGION is required")
        return self

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> McpConfig:
        values = {field: env[name] for field, name in ENV.items() if env.get(name)}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(f"{_name(e['loc'])}: {e['msg']}" for e in exc.errors(include_input=False))
            raise ConfigError(f"MCP server configuration: {problems}") from None


def _name(loc: tuple[int | str, ...]) -> str:
    """The environment variable a validation error is about (the model-level check names its own)."""
    return ENV.get(str(loc[0]), "environment") if loc else "environment"
