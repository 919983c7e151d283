"""Opaque, unguessable identifiers, and the one shape of caller-chosen ones."""

from __future__ import annotations

import re
import secrets
from typing import Annotated

from pydantic import StringConstraints

from workspace_memory.kernel.errors import InvalidInput

IDENTIFIER_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"
IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
"""Caller-chosen ids (conversations, sessions, idempotency keys): no `#`, so they are safe inside keys."""

Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)]
"""A caller-chosen id on the wire; path parameters are checked with `require_identifier`."""

IssuedId = Annotated[str, StringConstraints(min_length=1, max_length=200)]
"""An id the service issued (workspace, key session) or a user id from the identity provider."""


def require_identifier(value: object, what: str) -> str:
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise InvalidInput(f"{what} must be 1-128 characters of A-Z a-z 0-9 . _ : -")
    return value


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def new_ordered_id(prefix: str, now: float) -> str:
    """An unguessable id (96 random bits, as `new_id`) that sorts by creation time: 12 hex digits of epoch
    milliseconds first, so a listing by sort key is a listing by age (key sessions, newest first)."""
    return f"{prefix}_{int(now * 1000):012x}{secrets.token_hex(12)}"


def new_secret() -> str:
    """A bearer secret (delivery credential nonce): 256 bits."""
    return secrets.token_urlsafe(32)
