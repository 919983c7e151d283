"""The document's request bodies: policy, Save, Undo, retention, forgetting a line, applying a proposal."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.terms import Mode


class SetPolicy(ApiModel):
    mode: Mode
    expected_revision: int = Field(ge=0)


class SaveDocument(ApiModel):
    content: str


class Undo(ApiModel):
    restore_version: int = Field(ge=1)


class PutRetention(ApiModel):
    """Either window or both; one left out keeps its value."""

    history_days: int | None = Field(default=None, ge=1, le=365)
    agent_days: int | None = Field(default=None, ge=1, le=365)

    @model_validator(mode="after")
    def _some_window(self) -> PutRetention:
        if self.history_days is None and self.agent_days is None:
            raise ValueError("historyDays or agentDays is required")
        return self


class PurgeLine(ApiModel):
    line: str
    """Checked by the service (1-500 UTF-8 bytes, no newline), never echoed in an error."""


class ProposalIn(ApiModel):
    edits: list[dict[str, Any]] = Field(max_length=50)
    base_version: int = Field(ge=0)
    clear_generation: int = Field(ge=0)


class ApplyProposal(ApiModel):
    proposal: ProposalIn
