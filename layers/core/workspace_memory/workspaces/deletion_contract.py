"""The contract between the deletion route and the deletion workflow: plain pydantic models, no I/O.

Both the workspaces function (which starts and reads a deletion) and the worker (which runs it) import this
module, so it stays free of boto3 and anything else the Temporal workflow sandbox would reject. Only ids,
counts and times cross it: never text.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

WORKFLOW_NAME = "WorkspaceDeletionWorkflow"
DEFAULT_BATCH_SIZE = 100
MAX_BATCH_SIZE = 100
"""A batch is one TransactWriteItems of Deletes (at most 100 actions): it needs dynamodb:DeleteItem only,
where BatchWriteItem's permission would also allow puts."""


def deletion_workflow_id(workspace_id: str) -> str:
    """One deletion per workspace: a second DELETE finds this id taken and reuses the run."""
    return f"workspace-deletion-{workspace_id}"


class Phase(StrEnum):
    STARTED = "started"
    BRANCH_KEY = "branch_key"
    PURGING = "purging"
    DONE = "done"


class Memo:
    """The memo fields a deletion's progress is read from (`describe()`, no worker needed)."""

    REQUESTED_BY = "requestedBy"
    REQUESTED_AT = "requestedAt"
    PHASE = "phase"
    ITEMS_DELETED = "itemsDeleted"
    BRANCH_KEY_DESTROYED = "branchKeyDestroyed"


class DeletionInput(BaseModel):
    """Server-set when the owner's DELETE is accepted."""

    model_config = ConfigDict(frozen=True)

    workspace_id: str
    requested_by: str
    requested_at: str
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1, le=MAX_BATCH_SIZE)


class BranchKeyInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str


class PurgeBatchInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    limit: int = Field(ge=1, le=MAX_BATCH_SIZE)
    cleared: list[str] = Field(default_factory=list, max_length=MAX_BATCH_SIZE)
    """Turns whose Temporal executions are gone: their admissions may now be deleted."""


class PurgeBatchResult(BaseModel):
    """`deleted` items; `more` is false once the workspace's META (always last) is gone. `turns`: turns whose
    admissions this batch kept because their executions may still exist; the workflow deletes those, then
    names them as `cleared` in the next batch."""

    deleted: int
    more: bool
    turns: list[str] = Field(default_factory=list)


class DeletionResult(BaseModel):
    workspace_id: str
    items_deleted: int
    branch_key_items_deleted: int
