"""Opaque, unguessable identifiers, and the one shape of caller-chosen ones."""

from __future__ import annotations

import re
import secrets

from workspace_memory.errors import InvalidInput

IDENTIFIER = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""Caller-chosen ids (conversations, sessions, idempotency keys): no `#`, so they are safe inside keys."""


def require_identifier(value: object, what: str) -> str:
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise InvalidInput(f"{what} must be 1-128 characters of A-Z a-z 0-9 . _ : -")
    return value


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def new_secret() -> str:
    """A bearer secret (delivery credential nonce): 256 bits."""
    return secrets.token_urlsafe(32)
