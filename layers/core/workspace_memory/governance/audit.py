"""Reading the audit trail (docs/architecture.md#the-audit-trail): who, which agent and turn, what kind of
change, which ids and versions, when; never text.

Who may read what: the owner reads every member's events; any other member reads only the events they are
the actor of (their own changes, and their agents' changes in their turns and key sessions). Asking for
another member's events as a non-owner is refused (`FORBIDDEN`), not answered with an empty page, so a
member never takes "nothing" for "nothing happened". Newest first; a page may hold fewer than `limit`
events when filters skip some (at most `MAX_SCANNED` are read per call), and `next_cursor` resumes right
after the last event examined."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from workspace_memory.governance.audit_query import AuditQuery
from workspace_memory.kernel.errors import Forbidden
from workspace_memory.kernel.terms import Role
from workspace_memory.store import audit_queries, keys
from workspace_memory.store.audit_records import AuditRecord
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.workspaces.access import load_caller

if TYPE_CHECKING:
    from workspace_memory.kernel.clock import Clock
    from workspace_memory.store.ports import Table

MAX_SCANNED = 500
"""Events read per call at most, however many filters skip: a call's cost is bounded, not the trail's size."""


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditRecord]
    next_cursor: str | None


class AuditService:
    """The audit trail as its readers may see it (see the module docstring)."""

    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock

    def list(self, user_id: str, workspace_id: str, query: AuditQuery) -> AuditPage:
        query = query.checked()
        caller, _ = load_caller(self._table, workspace_id, user_id)
        if caller.role is not Role.OWNER:
            if query.actor not in (None, user_id):
                raise Forbidden("only the workspace owner may read another member's actions")
            query = replace(query, actor=user_id)
        return self._page(workspace_id, query)

    def _page(self, workspace_id: str, query: AuditQuery) -> AuditPage:
        now = self._clock.now()
        after = None if query.cursor is None else decode_cursor(query.cursor, keys.AUDIT_PREFIX)
        events = audit_queries.newest_first(
            self._table,
            workspace_id,
            since_ms=None if query.since is None else int(query.since * 1000),
            until_ms=None if query.until is None else int(query.until * 1000),
            after=after,
        )
        found: list[AuditRecord] = []
        for scanned, (position, record) in enumerate(events, start=1):
            if not record.expired(now) and query.admits(record):
                found.append(record)
            if len(found) == query.limit or scanned == MAX_SCANNED:
                return AuditPage(found, encode_cursor(position))
        return AuditPage(found, None)
