"""A person's marks on an entry (decisions/0064): the pin, which keeps agents from writing over a chain, and the
verification, which says who last confirmed the current revision still holds. Both are the head's attributes,
set by compare-and-set on the revision the person saw (`X-Base-Revision`), with the write right in the same
transaction; neither is a revision, so nothing is sealed, the history does not move and search is not stale."""

from __future__ import annotations

from workspace_memory.entries.limits import Limits
from workspace_memory.entries.model import Marked
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.refusals import refusal
from workspace_memory.entries.scopes import write_right
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import StaleRevision
from workspace_memory.store import keys
from workspace_memory.store.changes import MarkEntryHead
from workspace_memory.store.entry_records import head_of
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import load_caller


class EntryMarks:
    def __init__(self, table: Table, clock: Clock, limits: Limits, reads: EntryReads) -> None:
        self._table = table
        self._clock = clock
        self._limits = limits
        self._reads = reads

    def pin(self, user_id: str, workspace_id: str, entry_id: str, base: int, *, pinned: bool) -> Marked:
        """Pin (or unpin) the chain at `base`; pinning a pinned chain (unpinning an unpinned one) changes nothing
        and answers the same."""
        return self._mark(user_id, workspace_id, entry_id, base, pinned=pinned)

    def verify(self, user_id: str, workspace_id: str, entry_id: str, base: int) -> Marked:
        """The caller confirms revision `base`, the current one, still holds: `verifiedAt` now, `verifiedBy` them
        (a later verification replaces it; the next revision drops it)."""
        return self._mark(user_id, workspace_id, entry_id, base, verify=True)

    def _mark(
        self,
        user_id: str,
        workspace_id: str,
        entry_id: str,
        base: int,
        *,
        pinned: bool | None = None,
        verify: bool = False,
    ) -> Marked:
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self._reads.live_head(caller, head_of(found))
        right = write_right(caller, head.scope, head.scope_owner)
        if head.revision != base:
            raise StaleRevision(f"base revision {base} is not the current revision", current_revision=head.revision)
        now = self._clock.now()
        verified = (iso(now), user_id) if verify else None
        try:
            self._table.transact([MarkEntryHead(workspace_id, entry_id, base, pinned, verified), right])
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, entry_id) from None
        at, by = verified if verified is not None else (head.verified_at, head.verified_by)
        return Marked(entry_id, base, head.pinned if pinned is None else pinned, at, by)
