"""Opaque, unguessable identifiers."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def new_secret() -> str:
    """A bearer secret (delivery credential nonce): 256 bits."""
    return secrets.token_urlsafe(32)
