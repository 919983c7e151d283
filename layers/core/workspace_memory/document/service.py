"""The workspace memory document's service: read it, page through its history, Save, Clear and Undo.

Each write is one new version (`document.versions`, `document.commit`): the version item is created, the
head moves from exactly the caller's base version, and the caller still holds write right, all in one
transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workspace_memory.document.commit import Commit, commit_version, prepare_version
from workspace_memory.document.policy import Mode, Policy
from workspace_memory.document.versions import Op, VersionInfo, document_context, head_text, retained_version
from workspace_memory.governance.redaction import findings
from workspace_memory.kernel.clock import Clock
from workspace_memory.kernel.errors import Forbidden, Unavailable, WorkspaceNotFound
from workspace_memory.kernel.sealed import unseal
from workspace_memory.store import document_queries, keys
from workspace_memory.store.changes import BumpClearGeneration, Change, Label, MemberCanWrite
from workspace_memory.store.document_records import VersionRecord
from workspace_memory.store.head import Head
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.stale import stale_base
from workspace_memory.workspaces.access import Caller, load_caller

RECALL_MAX_BYTES = 8192


@dataclass(frozen=True)
class DocumentView:
    version: int
    content: str
    bytes: int
    recall_eligible: bool
    updated_at: str | None
    updated_by: str | None


@dataclass(frozen=True)
class HistoryPage:
    versions: list[VersionInfo]
    next_cursor: str | None


RETENTION_CACHE_SIZE = 1024


class DocumentService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._history_days: dict[str, int] = {}
        """Workspace -> the retention last seen: lets a warm Save stay one call (its transaction re-checks it)."""

    def _remember(self, workspace_id: str, days: int) -> None:
        cache = self._history_days
        cache.pop(workspace_id, None)
        if len(cache) >= RETENTION_CACHE_SIZE:
            del cache[next(iter(cache))]  # the least recently stored
        cache[workspace_id] = days

    # -- reads -----------------------------------------------------------------------------------

    def read(self, user_id: str, workspace_id: str) -> DocumentView:
        _, (head_item, policy_item) = load_caller(
            self._table, workspace_id, user_id, [keys.head(workspace_id), keys.policy(workspace_id)]
        )
        head = Head.from_item(head_item)
        content = head_text(self._cipher, workspace_id, head)
        mode = Policy.from_item(policy_item).mode
        eligible = mode is not Mode.OFF and not head.tombstone and head.bytes <= RECALL_MAX_BYTES
        return DocumentView(head.version, content, head.bytes, eligible, head.updated_at, head.updated_by)

    def history(self, user_id: str, workspace_id: str, limit: int, cursor: str | None) -> HistoryPage:
        load_caller(self._table, workspace_id, user_id)
        found, next_cursor = document_queries.version_page(self._table, workspace_id, limit=limit, cursor=cursor)
        now = self._clock.now()
        # An expired version is left out (a page may hold fewer than `limit`); the cursor still resumes right.
        versions = [VersionInfo.of(version) for version in found if not version.expired(now)]
        return HistoryPage(versions, next_cursor)

    def read_version(self, user_id: str, workspace_id: str, number: int) -> tuple[VersionInfo, str]:
        _, (item,) = load_caller(self._table, workspace_id, user_id, [keys.version(workspace_id, number)])
        found, ciphertext = retained_version(VersionRecord.of(item), number, self._clock.now())
        return VersionInfo.of(found), unseal(self._cipher, ciphertext, document_context(workspace_id, number))

    # -- writes ----------------------------------------------------------------------------------

    def save(self, user_id: str, workspace_id: str, content: str, base: int) -> Commit:
        """One round trip: write right and the base are conditions of the one transaction, not a read before
        it. Only a refusal reads, to say which: 404 for a non-member, 403 for a reader, 409 for a stale base."""
        try:
            prepared = prepare_version(
                self._cipher,
                workspace_id,
                content=content,
                base=base,
                op=Op.SAVE,
                author=user_id,
                now=self._clock.now(),
            )
        except Unavailable:
            # A workspace that does not exist has no branch key: answer as every route does for it (404).
            load_caller(self._table, workspace_id, user_id)
            raise
        cached = self._history_days.get(workspace_id)  # warm: no read; cold: commit_version reads it once
        try:
            days = commit_version(self._table, prepared, base, cached, [MemberCanWrite(workspace_id, user_id)])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise self._no_write_right(workspace_id, user_id) from None
            raise stale_base(exc, workspace_id, base) from None  # the head it lost to
        self._remember(workspace_id, days)
        return Commit(prepared.info, warnings=findings(content))  # CPU only: the Save stays one call

    def clear(self, user_id: str, workspace_id: str, base: int) -> Commit:
        """An empty version and clearGeneration+1 in one transaction: proposals made before it die."""
        caller, (policy_item,) = load_caller(self._table, workspace_id, user_id, [keys.policy(workspace_id)])
        caller.require_write()
        seen = Policy.from_item(policy_item)
        commit = self._commit(
            caller, content="", base=base, op=Op.CLEAR, extra=[BumpClearGeneration(workspace_id, seen.clear_generation)]
        )
        return Commit(commit.version, seen.clear_generation + 1)

    def undo(self, user_id: str, workspace_id: str, restore_version: int, base: int) -> Commit:
        """Old content re-encrypted as a new version; generation and policy revision never rewind."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.version(workspace_id, restore_version)])
        caller.require_write()
        _, ciphertext = retained_version(VersionRecord.of(item), restore_version, self._clock.now())
        old = unseal(self._cipher, ciphertext, document_context(workspace_id, restore_version))
        return self._commit(caller, content=old, base=base, op=Op.UNDO, restored_from=restore_version)

    def _commit(
        self,
        caller: Caller,
        *,
        content: str,
        base: int,
        op: Op,
        extra: Sequence[Change] = (),
        restored_from: int | None = None,
    ) -> Commit:
        workspace_id = caller.workspace.id
        prepared = prepare_version(
            self._cipher,
            workspace_id,
            content=content,
            base=base,
            op=op,
            author=caller.user_id,
            now=self._clock.now(),
            restored_from=restored_from,
        )
        days = caller.workspace.history_days  # read in the caller's snapshot, re-checked by the transaction
        try:
            days = commit_version(self._table, prepared, base, days, [caller.still_writer(), *extra])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise self._no_write_right(workspace_id, caller.user_id) from None
            raise stale_base(exc, workspace_id, base) from None  # the head it lost to
        self._remember(workspace_id, days)
        return Commit(prepared.info)

    def _no_write_right(self, workspace_id: str, user_id: str) -> Exception:
        """A non-member learns nothing (404); a member without write right is told so (403)."""
        try:
            load_caller(self._table, workspace_id, user_id)
        except WorkspaceNotFound as exc:
            return exc
        return Forbidden("write access to this workspace's memory is not granted to your role")
