"""Turn ingress: admit the turn, then start its workflow with the admission as server-set input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from workspace_memory.kernel.errors import InvalidInput, NotFound
from workspace_memory.store.ports import Table
from workspace_memory.turns.admission import AdmissionService
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.turn_contract import TurnInput, TurnView, turn_id_for
from workspace_memory.workspaces.access import owned_conversation

MAX_MESSAGE_BYTES = 32 * 1024


class TurnNotFound(NotFound):
    code = "TURN_NOT_FOUND"


class TurnRunner(Protocol):
    """Starts and observes turn workflows (Temporal in production)."""

    def start(self, turn: TurnInput) -> None:
        """Idempotent: starting a turn id that already exists is not an error."""
        ...

    def view(self, turn_id: str) -> TurnView | None: ...


@dataclass(frozen=True)
class StartedTurn:
    turn_id: str
    admission_id: str


class TurnService:
    def __init__(self, table: Table, admission: AdmissionService, runner: TurnRunner) -> None:
        self._table = table
        self._admission = admission
        self._runner = runner

    def start(self, request: AdmissionRequest) -> StartedTurn:
        """Admit the turn as its workflow (an id derived from the conversation and the idempotency key, so a
        resend addresses the same turn) and start that workflow with the admission as server-set input."""
        if request.message is None:
            raise InvalidInput("a turn needs the user's message")
        turn_id = turn_id_for(request.conversation_id, request.idempotency_key)
        admitted = self._admission.admit(request, turn_id=turn_id)
        self._runner.start(
            TurnInput(
                turn_id=turn_id,
                conversation_id=request.conversation_id,
                workspace_id=request.workspace_id,
                user_id=request.user_id,
                admission_id=admitted.admission.id,
                credential=admitted.credential,
                session_id=request.session_id,
                message=request.message,
            )
        )
        return StartedTurn(turn_id, admitted.admission.id)

    def view(self, user_id: str, conversation_id: str, turn_id: str) -> TurnView:
        """The conversation's owner only; anyone else, a missing conversation and a turn of another
        conversation all get the very same TurnNotFound."""
        owned_conversation(self._table, user_id, conversation_id, TurnNotFound("turn not found"))
        view = self._runner.view(turn_id)
        if view is None or view.conversation_id != conversation_id:
            raise TurnNotFound("turn not found")
        return view
