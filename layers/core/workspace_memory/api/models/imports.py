"""Importing a workspace archive: an import's progress, and the import workflow's steps (automation)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel

if TYPE_CHECKING:  # the domain object the model is built `of`: not imported at a handler's cold start
    from workspace_memory.workspaces.imports import ImportProgress


class ImportOut(OutModel):
    """An import's progress, for the owner who asked (ids, counts and times only)."""

    import_id: str
    workspace_id: str
    source_export: str
    status: str
    """`running` (the workspace answers 409 `WORKSPACE_IMPORTING` meanwhile), `completed`, or `failed` (its
    workflow ended before completing it: post the same archive again to resume, or delete the workspace)."""
    steps_applied: int
    counts: dict[str, int]
    """What the import wrote so far: `versions` (document), `chains` and `revisions` (entries), `members`."""
    created_at: str
    completed_at: str | None = None

    @classmethod
    def of(cls, progress: ImportProgress) -> ImportOut:
        return cls.model_validate(progress, from_attributes=True)


class ImportFileOut(OutModel):
    """One file applied by the import workflow: its steps, and how many this call wrote."""

    file: str
    steps: int
    applied: int


class ImportFinishOut(OutModel):
    """The import's last step: `completed`, with what it wrote."""

    status: str
    counts: dict[str, int]
