"""Opaque page cursors: the last sort key of a page, so a listing resumes exactly after it."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from workspace_memory.kernel.errors import InvalidInput

if TYPE_CHECKING:
    from workspace_memory.store.ports import Item, Table

MAX_PAGE = 100
"""The largest page of a listing whose items are then read in one snapshot: TransactGetItems takes at most 100."""
MAX_WORKSPACES_PAGE = MAX_PAGE // 2
"""Each listed workspace costs two items of the page's one TransactGetItems: META and MEMBER."""


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


def query_page(
    table: Table, pk: str, sk_prefix: str, *, limit: int, cursor: str | None, newest_first: bool
) -> tuple[list[Item], str | None]:
    """Up to `limit` items of the listing `sk_prefix` under `pk`, resuming after `cursor`, and the cursor of the
    next page (None on the last one)."""
    start_after = None if cursor is None else decode_cursor(cursor, sk_prefix)
    items = table.query(pk, sk_prefix, limit=limit + 1, newest_first=newest_first, start_after=start_after)
    next_cursor = encode_cursor(items[limit - 1]["sk"]) if len(items) > limit else None
    return items[:limit], next_cursor
