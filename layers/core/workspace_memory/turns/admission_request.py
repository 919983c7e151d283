"""What a caller asks a turn to be admitted for: built once, at the edge, and passed down as it is.

The turns route (through `TurnService.start`) and the automation route both hand `AdmissionService.admit` one
of these. It imports only the kernel, so a handler builds it before the services (and `turns.admission`) are
loaded (tests/unit/test_cold_start.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.kernel.ids import require_identifier
from workspace_memory.kernel.terms import MemoryState


@dataclass(frozen=True)
class AdmissionRequest:
    """A turn's admission as asked for. Its identifiers are checked when it is made: one that exists is
    well-formed, whoever built it."""

    conversation_id: str
    workspace_id: str
    user_id: str
    idempotency_key: str
    """A resend with the same key (in the same conversation) hands back the same admission and credential."""
    memory_state: MemoryState | None = None
    """The client's own view of its saves, frozen on the admission."""
    key_session_id: str | None = None
    """The user's key session the turn acts under: it narrows the scopes (an agent runtime needs one)."""
    session_id: str | None = None
    """The session whose working notes the turn's notes tools reach."""
    message: str | None = None
    """The turn's user message, kept sealed on the admission: what an agent's rule must quote
    (docs/architecture.md#rules). A turn started by ingress always has one."""

    def __post_init__(self) -> None:
        require_identifier(self.conversation_id, "conversation id")
        require_identifier(self.idempotency_key, "idempotencyKey")
        if self.session_id is not None:
            require_identifier(self.session_id, "session id")
