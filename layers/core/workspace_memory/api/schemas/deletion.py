"""The deletion function's request bodies: the workflows' steps of deleting a workspace and erasing a member."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.turns.turn_contract import TURN_ID_PATTERN
from workspace_memory.workspaces.deletion_contract import MAX_BATCH_SIZE
from workspace_memory.workspaces.erasure_contract import MAX_STEP_AFTER
from workspace_memory.workspaces.erasure_contract import Phase as ErasurePhase


class PurgeBatch(ApiModel):
    """One purge step of a deleted workspace: at most `limit` items."""

    limit: int = Field(ge=1, le=MAX_BATCH_SIZE)
    cleared: list[Annotated[str, Field(pattern=TURN_ID_PATTERN)]] = Field(default=[], max_length=MAX_BATCH_SIZE)
    """Turns whose Temporal executions the workflow deleted: their admissions go in this batch."""


class ErasureStep(ApiModel):
    """One step of a member's erasure: its phase, and where the previous step of that phase stopped."""

    phase: ErasurePhase
    after: str | None = Field(default=None, min_length=1, max_length=MAX_STEP_AFTER)
