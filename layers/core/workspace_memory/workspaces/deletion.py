"""Deleting a workspace (docs/architecture.md#deleting-a-workspace): a tombstone, the branch key destroyed, then a purge
of every item.

The owner's DELETE writes the tombstone in one transaction (META `deletedAt`/`deletedBy`, AI off and the
consent revision bumped, the document head a tombstone), so from that moment every route answers 404, recall
`deleted` and capture is refused. The branch key is destroyed next, in the same request (crypto-shredding),
and the workspace's consolidation schedule removed (docs/decisions/0088). Then a Temporal workflow purges
every item in batches through `WorkspacePurgeService`, META last, so the tombstone holds until nothing else
is left. Every step is idempotent: a DELETE sent again, a crash between steps, a
killed worker all end in the same place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import (
    ConfirmationMismatch,
    ConfirmationRequired,
    Conflict,
    Forbidden,
    WorkspaceNotDeleted,
    WorkspaceNotFound,
)
from workspace_memory.kernel.terms import Role
from workspace_memory.store import keys, workspace_queries
from workspace_memory.store.changes import Delete, Label, MemberIsOwner, TombstoneHead, TombstoneWorkspace
from workspace_memory.store.ports import KeyStore, Table, TransactionCancelled
from workspace_memory.store.workspace_records import MemberRecord, Workspace
from workspace_memory.workspaces.deletion_contract import DEFAULT_BATCH_SIZE, DeletionInput, PurgeBatchResult


@dataclass(frozen=True)
class DeletionProgress:
    workspace_id: str
    requested_by: str
    status: str
    """`running`, `completed` or `failed` (the workflow's state)."""
    phase: str
    items_deleted: int
    branch_key_destroyed: bool
    requested_at: str
    completed_at: str | None


class DeletionRunner(Protocol):
    """Where the purge runs (a Temporal workflow): started idempotently, read without a worker."""

    def start(self, deletion: DeletionInput) -> None: ...

    def progress(self, workspace_id: str) -> DeletionProgress | None: ...


class ScheduleRemover(Protocol):
    """Where a workspace's consolidation schedule lives (docs/decisions/0088): removed, idempotently."""

    def remove_schedule(self, workspace_id: str) -> None: ...


class DeletionService:
    def __init__(
        self,
        table: Table,
        key_store: KeyStore,
        clock: Clock,
        runner: DeletionRunner,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        schedules: ScheduleRemover,
    ) -> None:
        self._table = table
        self._key_store = key_store
        self._clock = clock
        self._runner = runner
        self._batch_size = batch_size
        self._schedules = schedules

    def delete(self, user_id: str, workspace_id: str, confirmation: str | None) -> DeletionProgress:
        """The owner's DELETE. A repeat by the same owner (running or completed) answers the same progress and
        redoes only what an interrupted request may have left undone (key destruction, the workflow start)."""
        if not confirmation:
            raise ConfirmationRequired("deleting a workspace needs X-Confirm-Workspace: <workspaceId>")
        if confirmation != workspace_id:
            raise ConfirmationMismatch("X-Confirm-Workspace does not name this workspace; nothing was deleted")
        meta_item, member_item = self._table.get_many([keys.meta(workspace_id), keys.member(workspace_id, user_id)])
        if meta_item is None:
            return self.progress(user_id, workspace_id)  # purged already: its owner still reads the outcome
        meta, member = Workspace.from_item(meta_item), MemberRecord.of(member_item)
        if meta.deleted_at is not None:
            if meta.deleted_by != user_id:
                raise WorkspaceNotFound("workspace not found")
            requested_at = meta.deleted_at
        else:
            if member is None:
                raise WorkspaceNotFound("workspace not found")
            if member.role is not Role.OWNER:
                raise Forbidden("only the workspace owner may do this")
            requested_at = self._tombstone(user_id, workspace_id)
        self._key_store.destroy_branch_key(workspace_id)
        # After the tombstone: no opt-in can land since, and one that raced it removes its own schedule.
        self._schedules.remove_schedule(workspace_id)
        self._runner.start(
            DeletionInput(
                workspace_id=workspace_id, requested_by=user_id, requested_at=requested_at, batch_size=self._batch_size
            )
        )
        return self.progress(user_id, workspace_id)

    def progress(self, user_id: str, workspace_id: str) -> DeletionProgress:
        """The deletion's progress, for the owner who asked for it only: anyone else, or no deletion, gets the
        404 of a workspace that does not exist."""
        found = self._runner.progress(workspace_id)
        if found is None or found.requested_by != user_id:
            raise WorkspaceNotFound("workspace not found")
        return found

    def _tombstone(self, user_id: str, workspace_id: str) -> str:
        at = iso(self._clock.now())
        try:
            self._table.transact(
                [
                    TombstoneWorkspace(workspace_id, user_id, at),
                    TombstoneHead(workspace_id),
                    MemberIsOwner(workspace_id, user_id),
                ]
            )
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise Forbidden("only the workspace owner may do this") from None
            # A concurrent DELETE of the same owner won: that tombstone is this request's too.
            meta = self._meta(workspace_id)
            if meta is not None and meta.deleted_at is not None and meta.deleted_by == user_id:
                return meta.deleted_at
            raise Conflict("the workspace changed concurrently; read it and try again") from None
        return at

    def _meta(self, workspace_id: str) -> Workspace | None:
        return Workspace.of(self._table.get(*keys.meta(workspace_id)))


class WorkspacePurgeService:
    """The purge's steps, served to the deletion workflow by the deletion function (the only role that may
    delete items). Each refuses a workspace that is not tombstoned: nothing here can touch a live one."""

    def __init__(self, table: Table, key_store: KeyStore) -> None:
        self._table = table
        self._key_store = key_store

    def destroy_branch_key(self, workspace_id: str) -> int:
        self._require_deleted(workspace_id)
        return self._key_store.destroy_branch_key(workspace_id)

    def purge_batch(self, workspace_id: str, limit: int, cleared: Sequence[str] = ()) -> PurgeBatchResult:
        """Deletes up to `limit` items of the workspace: its own partition first (consistent Query), then the
        items elsewhere that name it (conversations, admissions: the `ByWorkspace` index); META only when
        nothing else is found, and then `more` is false. An admission of a turn not `cleared` is kept and its
        turn answered: the workflow deletes the turn's execution first (its history holds the messages)."""
        meta = self._require_deleted(workspace_id)
        meta_key = keys.meta(workspace_id)
        own = workspace_queries.partition_keys(self._table, workspace_id, limit + 1)
        found = [key for key in own if key != meta_key][:limit]
        turns: list[str] = []
        if len(found) < limit:
            named = self._table.workspace_keys(workspace_id, limit + len(found) + 1)
            elsewhere = [key for key in named if key != meta_key and key not in found][: limit - len(found)]
            held, turns = workspace_queries.open_turns(self._table, elsewhere, set(cleared))
            found += [key for key in elsewhere if key not in held]
        if found or turns:
            if found:
                self._table.transact([Delete(key) for key in found])
            return PurgeBatchResult(deleted=len(found), more=True, turns=turns)
        if meta is not None:
            self._table.transact([Delete(meta_key)])
            return PurgeBatchResult(deleted=1, more=False)
        return PurgeBatchResult(deleted=0, more=False)

    def _require_deleted(self, workspace_id: str) -> Workspace | None:
        """The META if tombstoned, None if already gone; a live workspace is refused (409)."""
        meta = Workspace.of(self._table.get(*keys.meta(workspace_id)))
        if meta is not None and not meta.deleted:
            raise WorkspaceNotDeleted("the workspace is not deleted; nothing was purged")
        return meta
