"""Key sessions: a user's expiring, scoped delegation to agent runtimes (docs/architecture.md#key-sessions).

An automation admission must name a live key session of the same user and workspace; its scopes
(`memory:read`, `memory:write`, `notes`) are frozen into the admission. Revocation is a durable row (no
TTL), so the fence can check "no revocation" with one ConditionCheck and a revoked session can never come
back to life.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import Forbidden, InvalidInput, NotFound, WorkspaceNotFound
from workspace_memory.kernel.ids import new_ordered_id
from workspace_memory.kernel.terms import Scope as Scope
from workspace_memory.store import keys, workspace_queries
from workspace_memory.store.changes import Change, Create, Label, Put, WorkspaceLive
from workspace_memory.store.cursors import MAX_PAGE, encode_cursor
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.workspace_records import KeyRevocationRecord, KeySessionRecord
from workspace_memory.workspaces.access import Role, load_caller
from workspace_memory.workspaces.key_binding import BindRequest, KeyBinding, open_prefixes, seal_prefixes

DEFAULT_TTL_SECONDS = 3600
MIN_TTL_SECONDS = 60
MAX_TTL_SECONDS = 12 * 3600
TTL_GRACE_SECONDS = 86400
"""Expired session rows linger a day before TTL removes them, so late fences still see them expired."""


ALL_SCOPES: frozenset[Scope] = frozenset(Scope)
"""What a turn started on the human route holds, and a key session item stored before scopes existed."""
DEFAULT_SCOPES: frozenset[Scope] = frozenset({Scope.MEMORY_READ})
"""A key session opened without scopes may read only: writing and notes are delegated by asking for them."""
WRITE_SCOPES: frozenset[Scope] = frozenset({Scope.MEMORY_WRITE, Scope.NOTES})


def role_scopes(role: Role) -> frozenset[Scope]:
    """The scopes a member of `role` may delegate: a viewer reads only (docs/architecture.md#key-sessions)."""
    return ALL_SCOPES - WRITE_SCOPES if role is Role.VIEWER else ALL_SCOPES


class KeySessionNotFound(NotFound):
    code = "KEY_SESSION_NOT_FOUND"


class ScopeExceedsRole(Forbidden):
    """A key session asking for a scope the opener's role does not hold (a viewer asking to write)."""

    code = "SCOPE_EXCEEDS_ROLE"


@dataclass(frozen=True)
class KeySession:
    id: str
    workspace_id: str
    opened_by: str
    expires_at: float
    scopes: frozenset[Scope]
    binding: KeyBinding | None = None
    """The context it is bound to (docs/decisions/0077); None: unbound."""

    @property
    def expires_at_iso(self) -> str:
        return iso(self.expires_at)


@dataclass(frozen=True)
class ListedKeySession:
    session: KeySession
    revoked: bool


@dataclass(frozen=True)
class KeySessionPage:
    sessions: list[ListedKeySession]
    next_cursor: str | None


MAX_LIST_LIMIT = MAX_PAGE
"""The page's revocations are read in one TransactGetItems."""
MAX_LIST_READS = 5
"""Queries one listing page may make reading past other members' sessions before it answers a short page."""


class KeySessionService:
    def __init__(self, table: Table, clock: Clock, cipher: Cipher) -> None:
        self._table = table
        self._clock = clock
        self._cipher = cipher

    def open(
        self,
        user_id: str,
        workspace_id: str,
        ttl_seconds: int | None,
        scopes: Iterable[Scope] | None = None,
        bind: BindRequest | None = None,
    ) -> KeySession:
        """`bind` (validated here: 400 `INVALID_KEY_SESSION_BINDING`, nothing stored) limits what the session's
        agents touch; its key prefixes are sealed before the item is written (decisions/0077)."""
        binding = None if bind is None else KeyBinding.of(bind.scopes, bind.types, bind.key_prefixes)
        ttl = DEFAULT_TTL_SECONDS if ttl_seconds is None else ttl_seconds
        if not MIN_TTL_SECONDS <= ttl <= MAX_TTL_SECONDS:
            raise InvalidInput(f"ttlSeconds must be between {MIN_TTL_SECONDS} and {MAX_TTL_SECONDS}")
        granted = DEFAULT_SCOPES if scopes is None else frozenset(scopes)
        if not granted:
            raise InvalidInput("scopes must name at least one of memory:read, memory:write, notes")
        caller, _ = load_caller(self._table, workspace_id, user_id)
        beyond = granted - role_scopes(caller.role)
        if beyond:
            names = ", ".join(sorted(s.value for s in beyond))
            raise ScopeExceedsRole(f"a {caller.role.value} may not delegate {names}")
        now = self._clock.now()
        session = KeySession(new_ordered_id("ks", now), workspace_id, user_id, now + ttl, granted, binding)
        expires_at = int(session.expires_at)
        record = KeySessionRecord(session.id, user_id, expires_at, expires_at + TTL_GRACE_SECONDS, granted)
        if binding is not None:
            prefixes = binding.key_prefixes
            sealed = None if prefixes is None else seal_prefixes(self._cipher, workspace_id, session.id, prefixes)
            record = replace(record, bind_scopes=binding.scopes, bind_types=binding.types, bind_prefixes=sealed)
        self._write([Create(record.to_item(workspace_id), Label.KEY_SESSION), WorkspaceLive(workspace_id)])
        return session

    def list_own(self, user_id: str, workspace_id: str, limit: int, cursor: str | None) -> KeySessionPage:
        """The caller's own key sessions, newest first (ids sort by opening time), never another member's.
        Other members' sessions share the partition, so this reads on past them, at most `MAX_LIST_READS`
        queries a page: a page may hold fewer than `limit`, and `next_cursor` always resumes right after the
        last item examined. Revocations come from one snapshot read of the page's `KEYREVOKED#` items."""
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}")
        load_caller(self._table, workspace_id, user_id)
        now = self._clock.now()
        own: list[KeySessionRecord] = []
        next_cursor = cursor
        for _ in range(MAX_LIST_READS):
            found, after = workspace_queries.key_session_page(
                self._table, workspace_id, limit=limit, cursor=next_cursor
            )
            next_cursor = after
            for index, record in enumerate(found):
                if record.opened_by != user_id or record.expired(now):
                    continue
                own.append(record)
                if len(own) == limit:
                    more = index < len(found) - 1 or after is not None
                    position = keys.key_session(workspace_id, record.key_session_id)[1]
                    next_cursor = encode_cursor(position) if more else None
                    break
            if len(own) == limit or next_cursor is None:
                break
        revocations = [keys.key_revocation(workspace_id, record.key_session_id) for record in own]
        revoked = self._table.get_many(revocations) if own else []
        sessions = [
            ListedKeySession(
                KeySession(
                    record.key_session_id,
                    workspace_id,
                    user_id,
                    float(record.expires_at),
                    ALL_SCOPES if record.scopes is None else record.scopes,
                    binding_of(self._cipher, workspace_id, record),
                ),
                revoked=r is not None,
            )
            for record, r in zip(own, revoked, strict=True)
        ]
        return KeySessionPage(sessions, next_cursor)

    def revoke(self, user_id: str, workspace_id: str, session_id: str) -> None:
        """Idempotent: revoking twice is not an error. Only the opener or the owner may revoke."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.key_session(workspace_id, session_id)])
        found = KeySessionRecord.of(item)
        if found is None:
            raise KeySessionNotFound("key session not found")
        if found.opened_by != user_id and caller.role is not Role.OWNER:
            raise Forbidden("only the opener or the workspace owner may revoke a key session")
        self._write(
            [
                Put(KeyRevocationRecord(session_id, user_id, iso(self._clock.now())).to_item(workspace_id)),
                WorkspaceLive(workspace_id),
            ]
        )

    def _write(self, changes: list[Change]) -> None:
        """A key session's write, never after the workspace's tombstone (docs/decisions/0056): one judged on
        a read from before a deletion and sent after its purge would recreate an item of the workspace."""
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            if Label.WORKSPACE in exc.failed():
                raise WorkspaceNotFound("workspace not found") from None
            raise


def binding_of(cipher: Cipher, workspace_id: str, record: KeySessionRecord) -> KeyBinding | None:
    """The session's binding as stored (its prefixes opened); None for an unbound session."""
    if not record.bound:
        return None
    sealed = record.bind_prefixes
    prefixes = None if sealed is None else open_prefixes(cipher, workspace_id, record.key_session_id, sealed)
    return KeyBinding(record.bind_scopes, record.bind_types, prefixes)
