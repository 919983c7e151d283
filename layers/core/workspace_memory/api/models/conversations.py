"""Conversations: turns and recall receipts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import field_validator

from workspace_memory.api.models.base import OutModel, omitted_when_none
from workspace_memory.kernel.terms import RecallStatus
from workspace_memory.turns.turn_contract import RoundReceipt, ToolOutcome, TurnProposal, TurnView

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.turns.recall import ReceiptsPage
    from workspace_memory.turns.service import StartedTurn


class TurnStarted(OutModel):
    turn_id: str
    admission_id: str

    @classmethod
    def of(cls, started: StartedTurn) -> TurnStarted:
        return cls(turn_id=started.turn_id, admission_id=started.admission_id)


class ToolOutcomeOut(OutModel):
    round: int
    tool: str
    ok: bool
    outcome: str
    version: int | None = omitted_when_none()
    predicate: str | None = omitted_when_none()


class RoundReceiptOut(OutModel):
    round: int
    status: RecallStatus
    revision: int | None


class TurnProposalOut(OutModel):
    """A memory edit the agent proposed in this turn and did not save: apply it as it is with
    `POST …/memory/proposals/apply` (its `baseVersion` as `X-Base-Version`)."""

    round: int
    edits: list[dict[str, Any]]
    base_version: int
    clear_generation: int


class TurnOut(OutModel):
    turn_id: str
    status: Literal["running", "completed", "failed"]
    answer: str | None
    rounds: int
    tool_outcomes: list[ToolOutcomeOut]
    receipts: list[RoundReceiptOut]
    proposals: list[TurnProposalOut]
    """The document edits the agent proposed in this turn (read_only, or on a stale base): only the turn's owner
    reads them."""

    @classmethod
    def of(cls, turn_id: str, view: TurnView) -> TurnOut:
        return cls(
            turn_id=turn_id,
            status=view.status,
            answer=view.answer,
            rounds=view.rounds,
            tool_outcomes=[_tool_outcome(o) for o in view.tool_outcomes],
            receipts=[_round_receipt(r) for r in view.receipts],
            proposals=[_proposal(p) for p in view.proposals],
        )


def _tool_outcome(outcome: ToolOutcome) -> ToolOutcomeOut:
    return ToolOutcomeOut.model_validate(outcome, from_attributes=True)


def _proposal(proposal: TurnProposal) -> TurnProposalOut:
    return TurnProposalOut.model_validate(proposal, from_attributes=True)


def _round_receipt(receipt: RoundReceipt) -> RoundReceiptOut:
    return RoundReceiptOut.model_validate(receipt, from_attributes=True)


class RecallReceiptOut(OutModel):
    admission_id: str
    turn_id: str | None
    at: str
    status: RecallStatus
    revision: int | None
    entries: list[str] | None = omitted_when_none()
    """`entryId@revision` of each entry the recalled index named (left out when none)."""
    selected: list[str] | None = omitted_when_none()
    """`entryId@revision` of each entry selective recall handed the model for the turn's message (left out when
    none)."""

    @field_validator("entries", "selected", mode="before")
    @classmethod
    def _none_when_empty(cls, value: Any) -> Any:
        return list(value) or None if value is not None else None


class ReceiptsOut(OutModel):
    receipts: list[RecallReceiptOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: ReceiptsPage) -> ReceiptsOut:
        return cls(
            receipts=[RecallReceiptOut.model_validate(r, from_attributes=True) for r in page.receipts],
            next_cursor=page.next_cursor,
        )
