"""Deleting a workspace: its progress for the owner, and the deletion workflow's steps (automation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from workspace_memory.api.models.base import OutModel

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.workspaces.deletion import DeletionProgress


class DeletionOut(OutModel):
    """A workspace deletion's progress, for the owner who asked for it (ids, counts and times only)."""

    workspace_id: str
    status: Literal["running", "completed", "failed"]
    phase: str
    items_deleted: int
    branch_key_destroyed: bool
    requested_at: str
    completed_at: str | None

    @classmethod
    def of(cls, progress: DeletionProgress) -> DeletionOut:
        return cls.model_validate(progress, from_attributes=True)


class PurgeBatchOut(OutModel):
    """One purge step (automation, the deletion workflow): how many items went, and whether any are left."""

    deleted: int
    more: bool
    turns: list[str] = []
    """Turns whose admissions were kept: the workflow deletes their executions, then names them `cleared`."""


class BranchKeyDestroyedOut(OutModel):
    """How many key-store items of the workspace's branch key the call deleted (0 when already gone)."""

    items_deleted: int
