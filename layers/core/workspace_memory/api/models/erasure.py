"""Erasing a member: the erasure's record and receipt, and the erasure workflow's steps (automation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from workspace_memory.api.models.base import OutModel

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.store.erasure_records import ErasureRecord


class ErasureOut(OutModel):
    """An erasure: who now stands for the member in what the team shares (`pseudonym`), and, once
    `completed`, how many items of each kind were deleted and how many now name the pseudonym. Ids and
    counts only; never the erased member's id."""

    erasure_id: str
    pseudonym: str
    status: Literal["running", "completed"]
    requested_by: str
    """The owner, or the pseudonym of a member who erased themself."""
    requested_at: str
    completed_at: str | None
    deleted: dict[str, int]
    pseudonymized: dict[str, int]

    @classmethod
    def of(cls, record: ErasureRecord) -> ErasureOut:
        return cls(
            erasure_id=record.erasure_id,
            pseudonym=record.pseudonym,
            status="completed" if record.status == "completed" else "running",
            requested_by=record.requested_by,
            requested_at=record.requested_at,
            completed_at=record.completed_at,
            deleted=dict(sorted(record.deleted.items())),
            pseudonymized=dict(sorted(record.pseudonymized.items())),
        )


class ErasureStepOut(OutModel):
    """One erasure step (automation, the erasure workflow): whether its phase goes on, and from where."""

    more: bool
    after: str | None = None
    turns: list[str] = []
    """The histories phase: the member's turns' workflow ids, for the workflow to delete."""
