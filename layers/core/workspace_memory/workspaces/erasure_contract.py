"""The contract between the erasure routes and the erasure workflow: plain pydantic models, no I/O.

Only the workspace's and the erasure's ids cross it, never the member's: each step reads whom it erases from
the erasure's record, so no workflow history holds the id of the person being erased.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

WORKFLOW_NAME = "MemberErasureWorkflow"
BATCH_SIZE = 90
"""Items judged per step: with the batch's count and its audit event, one TransactWriteItems (at most 100)."""
MAX_STEP_AFTER = 2048


def erasure_workflow_id(workspace_id: str, erasure_id: str) -> str:
    return f"member-erasure-{workspace_id}-{erasure_id}"


class Phase(StrEnum):
    """The steps, in order: the member's private entries forgotten (the one forget path); the Temporal
    histories of their turns deleted (their messages are in them, under the stack's key, not the workspace's);
    their conversations' items deleted; every item of the workspace's partition judged (deleted or
    pseudonymized); the search snapshot dropped; the receipt written. The histories go before the
    conversations: the turn ids are read from the member's admissions, which that phase deletes."""

    PRIVATE = "private"
    HISTORIES = "histories"
    CONVERSATIONS = "conversations"
    ITEMS = "items"
    SEARCH = "search"
    RECEIPT = "receipt"


class Memo:
    PHASE = "phase"


class ErasureInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    erasure_id: str


class StepInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    erasure_id: str
    phase: Phase
    after: str | None = Field(default=None, max_length=MAX_STEP_AFTER)
    """Where the previous step of this phase stopped (a sort key, or a conversation's key): never a key that
    names the member."""


class StepResult(BaseModel):
    """`more`: the phase goes on from `after`. `turns` (the histories phase): the workflow ids of the member's
    turns this step found, for the workflow to delete (turn ids are derived from a conversation and a key,
    never from the member's id)."""

    more: bool
    after: str | None = None
    turns: list[str] = Field(default_factory=list)


class ErasureResult(BaseModel):
    workspace_id: str
    erasure_id: str
    steps: int
