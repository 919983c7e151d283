"""The audit trail on the wire: ids, numbers, status words and times; never text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel
from workspace_memory.kernel.clock import iso
from workspace_memory.kernel.terms import ActorKind, AuditKind

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.governance.audit import AuditPage
    from workspace_memory.store.audit_records import AuditRecord


class AuditTargetOut(OutModel):
    """One thing the change touched: its kind, its id and, where it has one, the version or revision made
    (for `retention`, the new number of days)."""

    kind: AuditKind
    id: str
    version: int | None = None


class AuditEventOut(OutModel):
    """One change: when, who (a person, or an agent on a person's turn or key session), what, to which ids."""

    event_id: str
    at: str
    kind: AuditKind
    op: str
    actor: str | None
    actor_kind: ActorKind
    admission_id: str | None = None
    """The admission of the turn an agent acted in (a turn's start answers its `admissionId`)."""
    key_session_id: str | None = None
    targets: list[AuditTargetOut]

    @classmethod
    def of(cls, record: AuditRecord) -> AuditEventOut:
        return cls(
            event_id=f"{record.at_ms:013d}-{record.tail}",
            at=iso(record.at_ms / 1000),
            kind=record.kind,
            op=record.op,
            actor=record.actor,
            actor_kind=record.actor_kind,
            admission_id=record.admission_id,
            key_session_id=record.key_session,
            targets=[AuditTargetOut(kind=t.kind, id=t.id, version=t.version) for t in record.targets],
        )


class AuditOut(OutModel):
    events: list[AuditEventOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: AuditPage) -> AuditOut:
        return cls(events=[AuditEventOut.of(record) for record in page.events], next_cursor=page.next_cursor)
