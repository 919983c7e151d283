"""What an agent's entry write answers (`SaveResult`: ids and revisions, never text), the headers every agent
write needs, and the admission's user as the entry service's caller: shared by the agent's tools."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from workspace_memory.entries.model import PossibleConflict
from workspace_memory.governance.redaction import Finding
from workspace_memory.kernel.errors import InvalidInput
from workspace_memory.kernel.ids import require_identifier
from workspace_memory.kernel.terms import Outcome
from workspace_memory.store.entry_saves import SavedAnswer
from workspace_memory.turns.authority import Authority, Predicate
from workspace_memory.workspaces.access import Caller, Role


@dataclass(frozen=True)
class SaveResult:
    """What a save came to: ids and revisions, never text."""

    outcome: Outcome
    entry_id: str | None = None
    revision: int | None = None
    candidate_id: str | None = None
    superseded: bool = False
    predicate: Predicate | None = None
    replayed: bool = False
    redactions: tuple[Finding, ...] = ()
    possible_conflicts: tuple[PossibleConflict, ...] = ()
    """The live entries the save may contradict (decisions/0087): with any, an `auto` save is a `proposal`."""

    @classmethod
    def replay(cls, answer: SavedAnswer) -> SaveResult:
        return cls(
            answer.outcome,
            entry_id=answer.entry_id,
            revision=answer.revision,
            candidate_id=answer.candidate_id,
            superseded=answer.superseded,
            replayed=True,
            possible_conflicts=tuple(PossibleConflict.parse(c) for c in answer.possible_conflicts),
        )


def request_hash(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def write_headers(
    admission_id: str | None, credential: str | None, idempotency_key: str | None
) -> tuple[str, str, str]:
    """An agent write's headers, all present (the `Idempotency-Key` an identifier)."""
    if not admission_id or not credential:
        raise InvalidInput("entry writes need the X-Admission-Id and X-Delivery-Credential headers")
    if idempotency_key is None:
        raise InvalidInput("Idempotency-Key is required")
    require_identifier(idempotency_key, "Idempotency-Key")
    return admission_id, credential, idempotency_key


def caller_of(authority: Authority) -> Caller:
    """The admission's user as the entry service's caller, from the snapshot (no second read)."""
    assert authority.workspace is not None
    assert authority.role is not None
    return Caller(authority.admission.user_id, Role(authority.role), authority.workspace)
