"""Opaque page cursors: the last sort key of a page, so a listing resumes exactly after it."""

from __future__ import annotations

import base64
import json

from workspace_memory.errors import InvalidInput


def encode_cursor(sort_key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"k": sort_key}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, prefix: str) -> str:
    """The sort key to start after; refused unless it belongs to the listing (`prefix`) it is used for."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))["k"]
    except (ValueError, KeyError, TypeError, UnicodeError) as exc:
        raise InvalidInput("cursor is not valid") from exc
    if not isinstance(value, str) or not value.startswith(prefix) or len(value) > 1024:
        raise InvalidInput("cursor is not valid")
    return value
