"""Retiring a chain into another (docs/decisions/0086): what accepting a consolidation proposal does. The retired
chain is superseded, never deleted: its head and its last revision say `superseded`, name the chain it went into
and keep their text for the workspace's history retention, as any superseded revision does; an `asOf` read
before the retirement still finds it. A retired head never moves again (every write moves only an active head),
so the retirement is final unless a person writes the statement anew."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from workspace_memory.entries.limits import Limits
from workspace_memory.entries.model import Evidence, Written
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.refusals import refusal
from workspace_memory.entries.scopes import write_right
from workspace_memory.kernel.clock import DAY_SECONDS, Clock, epoch_seconds, iso
from workspace_memory.kernel.errors import CandidateNotFound, EntryPinned, StaleRevision
from workspace_memory.kernel.terms import EntryStatus
from workspace_memory.store import entry_queries
from workspace_memory.store.changes import (
    BumpEntriesRevision,
    Change,
    EntryHeadIs,
    Label,
    MoveEntryHead,
    RetireEntryRevision,
)
from workspace_memory.store.entry_records import CandidateRecord, EntryRecord
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller


class Retirement:
    def __init__(self, table: Table, clock: Clock, limits: Limits, reads: EntryReads) -> None:
        self._table = table
        self._clock = clock
        self._limits = limits
        self._reads = reads

    def accept(
        self, caller: Caller, record: CandidateRecord, evidence: Evidence | None, decision: Sequence[Change]
    ) -> Written:
        """A consolidation proposal accepted: its chain retired into the one kept, iff both are still at the
        revisions the proposal read."""
        entry_id, seen = record.entry_id, record.base_revision
        if entry_id is None or seen is None or evidence is None:  # pragma: no cover - a proposal names both
            raise CandidateNotFound("candidate not found")
        workspace_id = caller.workspace.id
        head = self._reads.live_head(caller, entry_queries.entry_head(self._table, workspace_id, entry_id))
        kept = self._reads.live_head(caller, entry_queries.entry_head(self._table, workspace_id, evidence.keeper_id))
        return self.retire(caller, head, seen, kept, evidence.keeper_revision, decision)

    def retire(
        self,
        caller: Caller,
        head: EntryRecord,
        seen: int,
        keeper: EntryRecord,
        keeper_seen: int,
        decision: Sequence[Change],
    ) -> Written:
        """Retire `head`'s chain into `keeper`'s iff both are still at the revisions the proposal read (`seen`,
        `keeper_seen`), active, and the retired one not pinned; compare-and-set in one transaction with
        `decision`, so a chain that moved on meanwhile answers `STALE_REVISION` and nothing changes."""
        if head.revision != seen:
            raise StaleRevision(f"the entry moved on from revision {seen}", current_revision=head.revision)
        if keeper.revision != keeper_seen:
            raise StaleRevision(
                f"the entry it goes into moved on from revision {keeper_seen}", current_revision=keeper.revision
            )
        if head.pinned:
            raise EntryPinned("the entry is pinned: unpin it before retiring it")
        workspace_id, now = caller.workspace.id, self._clock.now()
        at = iso(now)
        ttl = epoch_seconds(at) + caller.workspace.history_days * DAY_SECONDS
        retired = replace(
            head, status=EntryStatus.SUPERSEDED, superseded_at=at, superseded_by_entry=keeper.entry_id, ttl=ttl
        )
        changes: list[Change] = [
            MoveEntryHead(retired.head_item(workspace_id), seen, pinned=False),
            RetireEntryRevision(workspace_id, head.entry_id, seen, keeper.entry_id, at, ttl),
            EntryHeadIs(workspace_id, keeper.entry_id, keeper_seen),
            BumpEntriesRevision(workspace_id),
            write_right(caller, head.scope, head.scope_owner),
            *decision,
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            if Label.KEEPER in exc.failed():
                raise StaleRevision("the entry it goes into moved on or was retired meanwhile") from None
            raise refusal(self._table, self._limits, caller, exc, head.entry_id) from None
        return Written(head.entry_id, seen)
