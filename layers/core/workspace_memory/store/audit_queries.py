"""Reading audit events: newest first, between two times, resuming after a position."""

from __future__ import annotations

from collections.abc import Iterator

from workspace_memory.store import keys
from workspace_memory.store.audit_records import AuditRecord
from workspace_memory.store.ports import Table

READ_BATCH = 100


def newest_first(
    table: Table, workspace_id: str, *, since_ms: int | None, until_ms: int | None, after: str | None
) -> Iterator[tuple[str, AuditRecord]]:
    """The workspace's events from `until_ms` (or from right after the position `after`, a sort key a
    previous page ended on) down to `since_ms`, both inclusive, with each one's position; the caller stops
    reading when it has enough (one Query of `READ_BATCH` at a time)."""
    floor = None if since_ms is None else keys.audit_bound(since_ms)
    start = after if after is not None else None if until_ms is None else keys.audit_bound(until_ms + 1)
    while True:
        items = table.query(
            keys.ws(workspace_id), keys.AUDIT_PREFIX, limit=READ_BATCH, newest_first=True, start_after=start
        )
        for item in items:
            if floor is not None and item["sk"] < floor:
                return
            start = item["sk"]
            yield start, AuditRecord.from_item(item)
        if len(items) < READ_BATCH:
            return
