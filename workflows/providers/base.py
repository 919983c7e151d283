"""Provider-neutral model I/O.

These models cross the Temporal activity boundary, so they stay plain data (no clients, no
callables) and every provider (scripted, Bedrock) speaks exactly this vocabulary. The workflow never
sees a vendor format.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from workspace_memory.turns.framing import NOTES_CLOSE as NOTES_CLOSE
from workspace_memory.turns.framing import NOTES_OPEN as NOTES_OPEN

# System-prompt section headings. The prompt composer writes them and the scripted provider reads
# them back, so they live here as the single shared definition.
MEMORY_HEADING = "### Workspace memory"
NOTES_HEADING = "### Working notes (across turns)"
JUDGE_HEADING = "### Consolidation judge"
"""The system prompt of consolidation's judging call (`workflows/consolidation_activities.py`) begins with it."""
READING_PREFIX = "The similarity rule reads: "
"""The judging request's last line: what `search.claims` made of the pair (the `scripted` judge answers it)."""
# NOTES_OPEN/NOTES_CLOSE (imported above) fence the raw notes text inside the notes section, so the current
# notes can be recovered exactly (the section also carries framing prose around them). They are defined
# beside the memory block's markers, since one neutralizer defuses both blocks' markers in both blocks.

StopReason = Literal["end_turn", "tool_use", "max_tokens"]


class ToolCall(BaseModel):
    """A tool invocation requested by the model; `id` pairs it with its `ToolResult`."""

    id: str
    name: str
    arguments: dict[str, Any]


class ToolResult(BaseModel):
    """Outcome of one tool call, fed back to the model in the next round."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False


class Message(BaseModel):
    """One entry of a turn's running conversation.

    "assistant" messages may carry `tool_calls`; a "tool" message carries the `tool_results`
    answering them. Kept as one flat shape (not a union) so it serializes trivially.
    """

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_results: list[ToolResult] = Field(default_factory=list)


class ToolSpec(BaseModel):
    """A tool offered to the model; `input_schema` is a JSON Schema object."""

    name: str
    description: str
    input_schema: dict[str, Any]


class ModelRequest(BaseModel):
    """Everything one model round sees: the composed system prompt, the conversation, the tools."""

    system_prompt: str
    messages: list[Message]
    tools: list[ToolSpec]


class ModelResponse(BaseModel):
    """The model's output for one round; `tool_use` means the caller must run `tool_calls`."""

    text: str
    tool_calls: list[ToolCall]
    stop_reason: StopReason


@runtime_checkable
class ModelProvider(Protocol):
    """The one interface the turn activity needs, so providers are swappable by configuration."""

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Run one model round."""
        ...


class ModelError(Exception):
    """A model call failed.

    `retryable` tells the caller (ultimately the Temporal retry policy) whether trying again can
    help: throttling and transient service faults can, a rejected request cannot. `code` is the
    provider's error code when there is one, for logs and transcripts.
    """

    def __init__(self, message: str, *, retryable: bool, code: str | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.code = code

    def __reduce__(self) -> tuple[Any, ...]:
        """Keep keyword-only attributes across pickling (the default drops them)."""
        return (_rebuild_model_error, (str(self), self.retryable, self.code))


def _rebuild_model_error(message: str, retryable: bool, code: str | None) -> ModelError:
    return ModelError(message, retryable=retryable, code=code)
