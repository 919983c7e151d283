"""Key sessions: a user's expiring, scoped delegation to agent runtimes (DESIGN §11).

An automation admission must name a live key session of the same user and workspace; its scopes
(`memory:read`, `memory:write`, `notes`) are frozen into the admission. Revocation is a durable row (no
TTL), so the fence can check "no revocation" with one ConditionCheck and a revoked session can never come
back to life.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from workspace_memory import keys
from workspace_memory.access import Role, load_caller
from workspace_memory.changes import Create, Label
from workspace_memory.clock import Clock, iso
from workspace_memory.errors import Forbidden, InvalidInput, NotFound
from workspace_memory.ids import new_id
from workspace_memory.ports import Table
from workspace_memory.terms import Scope as Scope

DEFAULT_TTL_SECONDS = 3600
MIN_TTL_SECONDS = 60
MAX_TTL_SECONDS = 12 * 3600
TTL_GRACE_SECONDS = 86400
"""Expired session rows linger a day before TTL removes them, so late fences still see them expired."""


ALL_SCOPES: frozenset[Scope] = frozenset(Scope)
"""A key session opened without scopes grants all three; so does a turn started on the human route."""


def scopes_of(values: Iterable[str] | None) -> frozenset[Scope]:
    """Scopes as stored (a list of strings); an item without any predates scopes and grants all."""
    return ALL_SCOPES if values is None else frozenset(Scope(v) for v in values)


class KeySessionNotFound(NotFound):
    code = "KEY_SESSION_NOT_FOUND"


@dataclass(frozen=True)
class KeySession:
    id: str
    workspace_id: str
    opened_by: str
    expires_at: float
    scopes: frozenset[Scope]

    @property
    def expires_at_iso(self) -> str:
        return iso(self.expires_at)


class KeySessionService:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock

    def open(
        self, user_id: str, workspace_id: str, ttl_seconds: int | None, scopes: Iterable[Scope] | None = None
    ) -> KeySession:
        ttl = DEFAULT_TTL_SECONDS if ttl_seconds is None else ttl_seconds
        if not MIN_TTL_SECONDS <= ttl <= MAX_TTL_SECONDS:
            raise InvalidInput(f"ttlSeconds must be between {MIN_TTL_SECONDS} and {MAX_TTL_SECONDS}")
        granted = ALL_SCOPES if scopes is None else frozenset(scopes)
        if not granted:
            raise InvalidInput("scopes must name at least one of memory:read, memory:write, notes")
        load_caller(self._table, workspace_id, user_id)
        session = KeySession(new_id("ks"), workspace_id, user_id, self._clock.now() + ttl, granted)
        item = {
            **keys.as_key(keys.key_session(workspace_id, session.id)),
            "keySessionId": session.id,
            "openedBy": user_id,
            "scopes": sorted(s.value for s in granted),
            "expiresAt": int(session.expires_at),
            "ttl": int(session.expires_at) + TTL_GRACE_SECONDS,
        }
        self._table.transact([Create(item, Label.KEY_SESSION)])
        return session

    def revoke(self, user_id: str, workspace_id: str, session_id: str) -> None:
        """Idempotent: revoking twice is not an error. Only the opener or the owner may revoke."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.key_session(workspace_id, session_id)])
        if item is None:
            raise KeySessionNotFound("key session not found")
        if item["openedBy"] != user_id and caller.role is not Role.OWNER:
            raise Forbidden("only the opener or the workspace owner may revoke a key session")
        self._table.put(
            {
                **keys.as_key(keys.key_revocation(workspace_id, session_id)),
                "keySessionId": session_id,
                "revokedBy": user_id,
                "revokedAt": iso(self._clock.now()),
            }
        )
