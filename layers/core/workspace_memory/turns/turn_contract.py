"""The contract between turn ingress and the turn workflow: plain pydantic models, no I/O.

Both the API (which starts and reads turns) and the workflow (which runs them) import this module, so
it must stay free of boto3 and anything else the Temporal workflow sandbox would reject.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from workspace_memory.kernel.terms import RecallStatus

WORKFLOW_NAME = "AgentTurnWorkflow"
STATUS_QUERY = "status"
MAX_ROUNDS = 8


class TurnInput(BaseModel):
    """Server-set: the admission id and credential come from ingress, never from the model."""

    model_config = ConfigDict(frozen=True)

    turn_id: str
    conversation_id: str
    workspace_id: str
    user_id: str
    admission_id: str
    credential: str
    session_id: str | None = None
    message: str
    max_rounds: int = MAX_ROUNDS


class RoundReceipt(BaseModel):
    round: int
    status: RecallStatus
    revision: int | None = None


class ToolOutcome(BaseModel):
    """What a tool call came to, without any memory or note text."""

    round: int
    tool: str
    ok: bool
    outcome: str
    version: int | None = None
    predicate: str | None = None


class TurnProposal(BaseModel):
    """A memory edit the agent proposed in round `round` (policy read_only, or its base was stale), for the person
    whose turn it was to review and apply (`POST …/memory/proposals/apply`). The edits' text is memory text as the
    capture redacted it: it lives only in the encrypted workflow state and the turn's owner's own view."""

    round: int
    edits: list[dict[str, Any]]
    base_version: int
    clear_generation: int


class TurnView(BaseModel):
    conversation_id: str
    status: Literal["running", "completed", "failed"]
    answer: str | None = None
    rounds: int = 0
    tool_outcomes: list[ToolOutcome] = []
    receipts: list[RoundReceipt] = []
    proposals: list[TurnProposal] = []


TURN_ID_PATTERN = r"^turn-[0-9a-f]{32}$"


class TurnHistories(BaseModel):
    """Turn workflows whose executions (their histories with them) a deletion or an erasure deletes."""

    model_config = ConfigDict(frozen=True)

    turns: list[str]


def turn_id_for(conversation_id: str, idempotency_key: str) -> str:
    """The workflow id: derived, so a resend with the same key addresses the same turn."""
    digest = hashlib.sha256(f"{conversation_id}\n{idempotency_key}".encode()).hexdigest()[:32]
    return f"turn-{digest}"
