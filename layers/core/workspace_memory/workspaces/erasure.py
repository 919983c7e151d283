"""Erasing a member (docs/architecture.md#erasing-a-member): the owner erases a departing member, or a member
erases themself. Their membership goes in the request's own transaction, so from its answer on they read and
write nothing; the erasure's record is created with it. A Temporal workflow then deletes what is theirs
alone and pseudonymizes their authorship of what the team shares, in resumable batches
(`workspaces/erasure_steps`), and ends with a receipt of counts per kind, ids only.

The record holds the member's id while the erasure runs (its steps read it there) and never after: the
receipt names the pseudonym, and who asked is kept as a digest salted with the erasure's id, enough to let
that person read the receipt and nothing else. No mapping from pseudonym to person is kept anywhere."""

from __future__ import annotations

import secrets
from typing import Protocol

from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import (
    ConfirmationMismatch,
    ConfirmationRequired,
    ErasureNotFound,
    Forbidden,
    MemberNotFound,
    OwnerNotErasable,
)
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.terms import Role
from workspace_memory.store import erasure_queries, keys
from workspace_memory.store.changes import Change, Create, Label, RemoveMember
from workspace_memory.store.erasure_records import RUNNING, ErasureRecord, requester_digest
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.store.workspace_records import MemberRecord, Workspace
from workspace_memory.workspaces.access import load_caller
from workspace_memory.workspaces.erasure_contract import ErasureInput

PSEUDONYM_PREFIX = "erased-"


class ErasureRunner(Protocol):
    """Where the erasure runs (a Temporal workflow), started idempotently: a running one is reused."""

    def start(self, erasure: ErasureInput) -> None: ...


class ErasureService:
    def __init__(self, table: Table, clock: Clock, runner: ErasureRunner) -> None:
        self._table = table
        self._clock = clock
        self._runner = runner

    def erase(self, user_id: str, workspace_id: str, member_id: str, confirmation: str | None) -> ErasureRecord:
        """The membership removed and the erasure started. Asked again for someone whose erasure is already
        running (a request that crashed before the workflow started), the same erasure is resumed."""
        if not confirmation:
            raise ConfirmationRequired("erasing a member needs X-Confirm-Member: <userId>")
        if confirmation != member_id:
            raise ConfirmationMismatch("X-Confirm-Member does not name this member; nothing was erased")
        caller, (target,) = load_caller(self._table, workspace_id, user_id, [keys.member(workspace_id, member_id)])
        itself = member_id == user_id
        if not itself:
            caller.require_owner()
        if target is None:
            return self._resume(workspace_id, member_id)
        if MemberRecord.from_item(target).role is Role.OWNER:
            raise OwnerNotErasable("the owner cannot be erased from their own workspace; delete it instead")
        erasure_id = new_id("er")
        pseudonym = PSEUDONYM_PREFIX + secrets.token_hex(12)
        record = ErasureRecord(
            erasure_id=erasure_id,
            pseudonym=pseudonym,
            requested_by=pseudonym if itself else user_id,
            requester=requester_digest(erasure_id, user_id),
            requested_at=iso(self._clock.now()),
            subject=member_id,
            deleted={"member": 1},  # the membership, removed in this very transaction
        )
        changes: list[Change] = [
            RemoveMember(workspace_id, member_id),
            Create(record.to_item(workspace_id), Label.ERASURE),
        ]
        if not itself:
            changes.append(caller.still_owner())
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise Forbidden("only the workspace owner may do this") from None
            return self._resume(workspace_id, member_id)  # removed meanwhile: by whom is the running erasure's
        self._runner.start(ErasureInput(workspace_id=workspace_id, erasure_id=erasure_id))
        return record

    def receipt(self, user_id: str, workspace_id: str, erasure_id: str) -> ErasureRecord:
        """The erasure's record, for the workspace's owner and for whoever asked for it (who may no longer be
        a member); anyone else gets the 404 of an erasure that does not exist. Read while it runs, the
        erasure is started again if it is not (idempotent), so a crash before the start is healed here too."""
        meta_item, record_item = self._table.get_many([keys.meta(workspace_id), keys.erasure(workspace_id, erasure_id)])
        meta, record = Workspace.of(meta_item), ErasureRecord.of(record_item)
        if meta is None or meta.deleted or record is None:
            raise ErasureNotFound("erasure not found")
        if meta.owner_id != user_id and record.requester != requester_digest(erasure_id, user_id):
            raise ErasureNotFound("erasure not found")
        if record.status == RUNNING:
            self._runner.start(ErasureInput(workspace_id=workspace_id, erasure_id=erasure_id))
        return record

    def _resume(self, workspace_id: str, member_id: str) -> ErasureRecord:
        for record in erasure_queries.running_erasures(self._table, workspace_id):
            if record.subject == member_id:
                self._runner.start(ErasureInput(workspace_id=workspace_id, erasure_id=record.erasure_id))
                return record
        raise MemberNotFound("no such member in this workspace")
