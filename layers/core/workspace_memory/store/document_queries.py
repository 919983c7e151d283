"""Reading document items: the head, every version in order, a page of the history, the retention a
workspace item names, and the expiry times of every entry revision (what the retention rewrite needs)."""

from __future__ import annotations

from collections.abc import Iterator

from workspace_memory.store import keys
from workspace_memory.store.cursors import query_page
from workspace_memory.store.document_records import REVISION_EXPIRY_ATTRIBUTES, RevisionExpiry, VersionRecord
from workspace_memory.store.head import Head
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Table
from workspace_memory.store.workspace_records import history_days_of


def head(table: Table, workspace_id: str) -> Head:
    """The document head (version 0 and no text for a document never saved)."""
    return Head.from_item(table.get(*keys.head(workspace_id)))


def versions(table: Table, workspace_id: str, page_size: int = 100) -> Iterator[VersionRecord]:
    """Every stored version of the workspace, oldest first, page by page (expired ones included: the caller
    judges)."""
    for item in query_all(table, keys.ws(workspace_id), keys.VERSION_PREFIX, page_size=page_size):
        yield VersionRecord.from_item(item)


def version_page(
    table: Table, workspace_id: str, *, limit: int, cursor: str | None
) -> tuple[list[VersionRecord], str | None]:
    """Up to `limit` versions, newest first, resuming after `cursor`, and the next page's cursor."""
    items, next_cursor = query_page(
        table, keys.ws(workspace_id), keys.VERSION_PREFIX, limit=limit, cursor=cursor, newest_first=True
    )
    return [VersionRecord.from_item(item) for item in items], next_cursor


def history_days(table: Table, workspace_id: str) -> int:
    """The workspace's retention, read on its own (one GetItem of its item)."""
    return history_days_of(table.get(*keys.meta(workspace_id)))


def revision_expiries(table: Table, workspace_id: str) -> Iterator[RevisionExpiry]:
    """Every entry revision of the workspace, projected to its status and expiry times (never its text)."""
    items = query_all(
        table,
        keys.ws(workspace_id),
        keys.ENTRY_REVISION_PREFIX,
        page_size=1000,
        attributes=REVISION_EXPIRY_ATTRIBUTES,
    )
    for item in items:
        yield RevisionExpiry.from_item(item)
