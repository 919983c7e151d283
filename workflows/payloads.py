"""Activity inputs and outputs: one pydantic model each, encrypted on the wire by the payload codec."""

from __future__ import annotations

from pydantic import BaseModel

from workflows.providers.base import Message, ModelResponse, ToolCall, ToolResult
from workspace_memory.turns.turn_contract import RoundReceipt, ToolOutcome, TurnInput, TurnProposal


class RoundInput(BaseModel):
    turn: TurnInput
    round: int
    messages: list[Message]


class RoundOutput(BaseModel):
    """The model's output and the recall receipt: never the prompt, so never the memory text."""

    response: ModelResponse
    receipt: RoundReceipt


class ToolInput(BaseModel):
    turn: TurnInput
    round: int
    call: ToolCall
    base_version: int


class ToolRun(BaseModel):
    result: ToolResult
    outcome: ToolOutcome
    proposal: TurnProposal | None = None
    """A capture's proposal, kept apart from the text-free outcome: the turn's owner reviews it."""
