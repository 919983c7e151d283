"""An audit page request, what the route parses (docs/architecture.md#the-audit-trail): apart from the trail's
reader so a function declares its query's bounds without importing the store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspace_memory.kernel.errors import InvalidInput
from workspace_memory.kernel.terms import AuditKind

if TYPE_CHECKING:
    from workspace_memory.store.audit_records import AuditRecord

MAX_AUDIT_PAGE = 100
DEFAULT_AUDIT_PAGE = 50


@dataclass(frozen=True)
class AuditQuery:
    """A page request: a time window (epoch seconds, both ends inclusive), an actor, a kind, a page."""

    since: float | None = None
    until: float | None = None
    actor: str | None = None
    kind: AuditKind | None = None
    limit: int = DEFAULT_AUDIT_PAGE
    cursor: str | None = None

    def checked(self) -> AuditQuery:
        if not 1 <= self.limit <= MAX_AUDIT_PAGE:
            raise InvalidInput(f"limit must be between 1 and {MAX_AUDIT_PAGE}")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise InvalidInput("since must not be later than until")
        return self

    def admits(self, record: AuditRecord) -> bool:
        if self.actor is not None and record.actor != self.actor:
            return False
        return self.kind is None or any(target.kind is self.kind for target in record.targets)
