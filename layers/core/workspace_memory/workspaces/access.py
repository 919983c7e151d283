"""Workspaces, members and the rights they confer.

Reading needs membership; writing needs the owner, or an editor in a `shared` workspace. A caller who is
not a member learns nothing: every route answers WorkspaceNotFound, whether or not the workspace exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import Conflict, Forbidden, InvalidInput, NotFound, WorkspaceNotFound
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.terms import Role as Role
from workspace_memory.kernel.terms import ShareType as ShareType
from workspace_memory.store import keys, workspace_queries
from workspace_memory.store.changes import (
    DEFAULT_HISTORY_DAYS,
    Create,
    Label,
    MemberCanWrite,
    MemberIsOwner,
    Put,
    SetAi,
)
from workspace_memory.store.cursors import MAX_WORKSPACES_PAGE, decode_cursor, encode_cursor
from workspace_memory.store.ports import Cipher, Item, KeyStore, Table, TransactionCancelled
from workspace_memory.store.workspace_records import MemberRecord, is_importing
from workspace_memory.store.workspace_records import Workspace as Workspace
from workspace_memory.store.workspace_records import is_deleted as is_deleted
from workspace_memory.workspaces.import_errors import WorkspaceImporting
from workspace_memory.workspaces.workspace_names import open_name, seal_name


@dataclass(frozen=True)
class Caller:
    """A member of a workspace, as read in one snapshot."""

    user_id: str
    role: Role
    workspace: Workspace

    @property
    def can_write(self) -> bool:
        return self.role in self.workspace.writer_roles()

    def require_write(self) -> None:
        if not self.can_write:
            raise Forbidden("write access to this workspace's memory is not granted to your role")

    def require_owner(self) -> None:
        if self.role is not Role.OWNER:
            raise Forbidden("only the workspace owner may do this")

    def still_writer(self) -> MemberCanWrite:
        """The transaction's check that the caller still holds write right when the write lands."""
        return MemberCanWrite(self.workspace.id, self.user_id)

    def still_owner(self) -> MemberIsOwner:
        """The transaction's check that the caller is still an owner when the write lands."""
        return MemberIsOwner(self.workspace.id, self.user_id)


def load_caller(
    table: Table, workspace_id: str, user_id: str, extra: Sequence[keys.Key] = ()
) -> tuple[Caller, list[Item | None]]:
    """One consistent read of membership plus whatever else the operation needs."""
    meta, member, *rest = table.get_many([keys.meta(workspace_id), keys.member(workspace_id, user_id), *extra])
    if meta is None or member is None or is_deleted(meta):
        raise WorkspaceNotFound("workspace not found")
    if is_importing(meta):
        raise WorkspaceImporting("the workspace is being filled from an archive; follow the import's progress")
    return Caller(user_id, MemberRecord.from_item(member).role, Workspace.from_item(meta)), rest


def owned_conversation(table: Table, user_id: str, conversation_id: str, not_found: NotFound) -> str:
    """The conversation's workspace, if `user_id` owns the conversation and is still a member; otherwise
    `not_found`, the very same error as for a conversation that does not exist
    (docs/architecture.md#ownership-and-identical-404s)."""
    owner = workspace_queries.conversation_owner(table, conversation_id)
    if owner is None or owner.user_id != user_id:
        raise not_found
    workspace_id = owner.workspace_id
    try:
        load_caller(table, workspace_id, user_id)
    except WorkspaceNotFound:
        raise not_found from None
    return workspace_id


@dataclass(frozen=True)
class WorkspaceView:
    """What a member reads of a workspace: the caller's snapshot and the workspace's name, opened."""

    caller: Caller
    name: str


@dataclass(frozen=True)
class Membership:
    """One of a person's workspaces, as listed for them (never its memory)."""

    workspace_id: str
    name: str
    role: Role


@dataclass(frozen=True)
class MembershipPage:
    workspaces: list[Membership]
    next_cursor: str | None


class AccessService:
    def __init__(self, table: Table, clock: Clock, key_store: KeyStore, cipher: Cipher) -> None:
        """`cipher` seals and opens workspace names only (workspace_names): this service holds no branch key."""
        self._table = table
        self._clock = clock
        self._key_store = key_store
        self._cipher = cipher

    def create_workspace(self, user_id: str, name: str, share_type: ShareType) -> str:
        """The workspace's branch key first, then its META and owner: a META never names a missing key. If the
        transaction fails after the key was made, the key is an orphan of a workspace id never used again."""
        workspace_id = new_id("ws")
        branch_key_id = self._key_store.create_branch_key(workspace_id)
        now = iso(self._clock.now())
        workspace = Workspace(
            workspace_id,
            user_id,
            share_type,
            ai_enabled=False,
            consent_revision=0,
            history_days=DEFAULT_HISTORY_DAYS,
            name_sealed=seal_name(self._cipher, workspace_id, name),
            created_at=now,
            branch_key_id=branch_key_id,
        )
        owner = MemberRecord(user_id, Role.OWNER, can_write=True, updated_at=now)
        self._table.transact([Create(workspace.to_item(), Label.WORKSPACE), Put(owner.to_item(workspace_id))])
        return workspace_id

    def view(self, user_id: str, workspace_id: str) -> WorkspaceView:
        """The caller's view of a workspace (name, settings, role, write right) from one snapshot; a non-member
        and a deleted workspace get the same WorkspaceNotFound as a missing one."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        return WorkspaceView(caller, open_name(self._cipher, workspace_id, caller.workspace.name_sealed))

    def memberships(self, user_id: str, limit: int, cursor: str | None) -> MembershipPage:
        """The caller's workspaces, a page at a time. The ByMember index finds the memberships (eventually
        consistent: a workspace created a moment ago may be missing for that moment); each page's META and
        MEMBER items are then read in one snapshot, so a deleted workspace is left out and every role is
        current. A page may hold fewer than `limit` (deleted workspaces); `next_cursor` still resumes right."""
        if not 1 <= limit <= MAX_WORKSPACES_PAGE:
            raise InvalidInput(f"limit must be between 1 and {MAX_WORKSPACES_PAGE}")
        start = None
        if cursor is not None:
            pk = decode_cursor(cursor, keys.WORKSPACE_PREFIX)
            start = (pk, keys.member(keys.workspace_of(pk), user_id)[1])
        found = self._table.member_keys(user_id, keys.MEMBER_PREFIX, limit=limit + 1, start_after=start)
        page = [keys.workspace_of(pk) for pk, _ in found[:limit]]
        next_cursor = encode_cursor(keys.ws(page[-1])) if len(found) > limit else None
        if not page:
            return MembershipPage([], next_cursor)
        read = self._table.get_many([k for ws in page for k in (keys.meta(ws), keys.member(ws, user_id))])
        listed = [
            Membership(ws, self._name(meta), MemberRecord.from_item(member).role)
            for ws, meta, member in zip(page, read[0::2], read[1::2], strict=True)
            if meta is not None and member is not None and not is_deleted(meta)
        ]
        return MembershipPage(listed, next_cursor)

    def _name(self, meta: Item) -> str:
        workspace = Workspace.from_item(meta)
        return open_name(self._cipher, workspace.id, workspace.name_sealed)

    def put_member(self, actor_id: str, workspace_id: str, user_id: str, role: Role) -> None:
        caller, _ = load_caller(self._table, workspace_id, actor_id)
        caller.require_owner()
        if user_id == caller.workspace.owner_id:
            raise InvalidInput("the workspace creator's role cannot be changed")
        # `canWrite` is the role judged against the (immutable) share type, so a write can check it alone.
        member = MemberRecord(user_id, role, role in caller.workspace.writer_roles(), iso(self._clock.now()))
        self._table.transact([Put(member.to_item(workspace_id)), caller.still_writer()])

    def set_ai(self, actor_id: str, workspace_id: str, enabled: bool) -> Workspace:
        """Turning AI on or off always bumps the consent revision, retiring every admitted turn."""
        caller, _ = load_caller(self._table, workspace_id, actor_id)
        caller.require_owner()
        seen = caller.workspace.consent_revision
        try:
            self._table.transact([SetAi(workspace_id, enabled, seen), caller.still_writer()])
        except TransactionCancelled:
            raise Conflict("the workspace changed concurrently; read it and try again") from None
        return replace(caller.workspace, ai_enabled=enabled, consent_revision=seen + 1)
