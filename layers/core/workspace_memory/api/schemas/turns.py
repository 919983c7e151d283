"""The turns' request bodies: admitting a turn (an agent runtime's or a person's), capturing edits, notes."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationError, ValidatorFunctionWrapHandler, WrapValidator
from pydantic_core import PydanticCustomError

from workspace_memory.api.errors import refused
from workspace_memory.api.models.base import ApiModel
from workspace_memory.document.edits import MALFORMED_EDITS, Edit, InvalidEdits
from workspace_memory.kernel.ids import Identifier, IssuedId
from workspace_memory.kernel.terms import MemoryState
from workspace_memory.turns.admission_request import AdmissionRequest


class Admit(ApiModel):
    workspace_id: IssuedId
    user_id: IssuedId
    idempotency_key: Identifier
    memory_state: MemoryState | None = None
    key_session_id: IssuedId | None = None
    session_id: Identifier | None = None
    message: str | None = Field(default=None, min_length=1, max_length=32 * 1024)
    """The turn's user message, kept sealed on the admission: what an agent's rule must quote
    (docs/architecture.md#rules)."""

    def request(self, conversation_id: str) -> AdmissionRequest:
        """The admission an agent runtime asks for, in conversation `conversation_id`, for the body's user."""
        return _admission_request(self, conversation_id, self.user_id)


def _capture_edit(raw: object, validate: ValidatorFunctionWrapHandler) -> Edit:
    """One edit of a capture. What is not a JSON object fails the schema, as a wrong type does anywhere; an
    object that is not an edit is refused as INVALID_EDITS, without pydantic's message (it would quote text)."""
    if not isinstance(raw, dict):
        raise PydanticCustomError("dict_type", "Input should be a valid dictionary")
    try:
        edit: Edit = validate(raw)
    except ValidationError:
        raise refused(InvalidEdits(MALFORMED_EDITS)) from None
    return edit


CaptureEdit = Annotated[Edit, WrapValidator(_capture_edit)]
"""An edit as the agent's write tool sends it: add{line,heading?}, replace{old,new} or remove{line}."""


class Capture(ApiModel):
    admission_id: str = Field(min_length=1, max_length=1024)
    credential: str = Field(min_length=1, max_length=200)
    edits: list[CaptureEdit] = Field(max_length=50)
    """At most 50 here; how many one capture may make (5) and whether each applies are the document's rules,
    answered as INVALID_EDITS with their `problems`."""
    base_version: int = Field(ge=0)


class PutNotes(ApiModel):
    notes: str


class StartTurn(ApiModel):
    workspace_id: IssuedId
    message: str = Field(min_length=1, max_length=32 * 1024)
    idempotency_key: Identifier
    memory_state: MemoryState | None = None
    key_session_id: IssuedId | None = None
    session_id: Identifier | None = None

    def request(self, conversation_id: str, user_id: str) -> AdmissionRequest:
        """The admission the signed-in `user_id` asks for, for a turn in conversation `conversation_id`."""
        return _admission_request(self, conversation_id, user_id)


def _admission_request(body: Admit | StartTurn, conversation_id: str, user_id: str) -> AdmissionRequest:
    """The one place a body of either admission route becomes the `AdmissionRequest` passed down."""
    return AdmissionRequest(
        conversation_id=conversation_id,
        workspace_id=body.workspace_id,
        user_id=user_id,
        idempotency_key=body.idempotency_key,
        memory_state=body.memory_state,
        key_session_id=body.key_session_id,
        session_id=body.session_id,
        message=body.message,
    )
