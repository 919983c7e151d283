"""Forgetting entries: every revision of the chain deleted, its key freed, a text-free tombstone head left,
what its revisions drew on blocked for agents (`forgotten_sources`), its pending candidates closed, and the
search snapshot (which may hold the forgotten text, sealed) dropped. By DELETE, by the owner for all of one
member's entries or for every agent-authored one (`forget_where`, the one bulk loop), or by an accepted forget
proposal; idempotent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workspace_memory.entries.forgotten_sources import Blocks, Swept, batches, close_candidates, slots_of
from workspace_memory.entries.limits import Limits
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.refusals import refusal
from workspace_memory.entries.scopes import write_right
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import Conflict, EntryNotFound
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.search import search_snapshot
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.changes import Change, Delete, Label, MoveEntryHead
from workspace_memory.store.entry_records import EntryHead, EntryRecord, Tombstone, head_of
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller, load_caller

FORGET_BATCH = 90
"""Revisions deleted and sources blocked per forget transaction (plus head, key, counter, right, decision and
audit: under DynamoDB's 100)."""


@dataclass(frozen=True)
class Forgotten:
    """What one pass of a bulk forget did: the active chains it forgot (ids only), the chains it judged and
    left, and where it stopped (`last`, the sort key of the last head it examined; None when it reached the end)."""

    entry_ids: tuple[str, ...]
    left: int
    last: str | None


def private_to(member_id: str) -> Callable[[EntryHead], bool]:
    """The heads of one member's private entries (judged on metadata alone)."""

    def theirs(head: EntryHead) -> bool:
        return head.scope is EntryScope.MEMBER and head.scope_owner == member_id

    return theirs


class EntryForgetting:
    def __init__(self, table: Table, clock: Clock, limits: Limits, reads: EntryReads) -> None:
        self._table = table
        self._clock = clock
        self._limits = limits
        self._reads = reads

    def forget(self, user_id: str, workspace_id: str, entry_id: str) -> None:
        """Every revision of the chain deleted, its key freed, a text-free tombstone left. Idempotent."""
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self._reads.visible_head(caller, head_of(found))
        self.forget_chain(caller, head, write_right(caller, head.scope, head.scope_owner))

    def forget_member(self, user_id: str, workspace_id: str, member_id: str) -> int:
        """The owner forgets all of one member's private entries without reading them (nothing is decrypted)."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        caller.require_owner()
        return len(self.forget_where(caller, private_to(member_id)).entry_ids)

    def forget_where(
        self,
        caller: Caller,
        qualifies: Callable[[EntryHead], bool],
        *,
        after: str | None = None,
        budget: int | None = None,
    ) -> Forgotten:
        """The owner's bulk forget: every chain whose head `qualifies` (tombstones included, so a forget cut
        short is finished), judged on metadata alone, at most `budget` heads examined after position `after`.
        A head that moves meanwhile is judged again, and left if it no longer qualifies."""
        forgotten: list[str] = []
        left = examined = 0
        last = after
        swept = Swept()
        try:
            for position, head in entry_queries.entry_heads(self._table, caller.workspace.id, after=after):
                if budget is not None and examined == budget:
                    return Forgotten(tuple(forgotten), left, last)
                examined, last = examined + 1, position
                if not qualifies(head):
                    left += isinstance(head, EntryRecord)
                    continue
                done = self.forget_chain(caller, head, caller.still_owner(), keep=qualifies, swept=swept)
                if done and isinstance(head, EntryRecord):
                    forgotten.append(head.entry_id)
            return Forgotten(tuple(forgotten), left, None)
        finally:
            close_candidates(self._table, caller.workspace.id, caller.user_id, swept, self._clock.now())

    def forget_chain(
        self,
        caller: Caller,
        head: EntryHead,
        right: Change,
        *,
        decision: Sequence[Change] = (),
        keep: Callable[[EntryHead], bool] | None = None,
        swept: Swept | None = None,
    ) -> bool:
        """The one way every forget goes (DELETE, the owner's forget of a member's entries, an accepted forget
        proposal): the chain's revisions deleted with the blocks of what they drew on, and then, once any of
        that landed, the search snapshot, which may hold the forgotten text (sealed), dropped too, and the
        chain's pending candidates closed, even if a later batch fails.

        With `decision` (an accepted forget proposal) the first transaction carries it and nothing is retried:
        a head that moved from the revision read fails it, and the refusal says how. With `keep` (a bulk forget),
        a head that moved is forgotten only if it still qualifies; False when it was left. With `swept` (a bulk
        forget), the candidates are left to the caller, which closes them once for the whole pass."""
        landed: list[bool] = []
        sweep = Swept() if swept is None else swept
        try:
            return self._delete_chain(caller, head, right, decision, keep, landed, sweep)
        finally:
            if landed:
                search_snapshot.drop(self._table, caller.workspace.id)
                if swept is None:
                    close_candidates(self._table, caller.workspace.id, caller.user_id, sweep, self._clock.now())

    def _holds_key(self, workspace_id: str, slot: str, entry_id: str) -> bool:
        """The chain still holds its key slot: a chain whose agent memory expired may have lost it to a newer one."""
        return entry_queries.key_holder(self._table, workspace_id, slot) == entry_id

    def _delete_chain(
        self,
        caller: Caller,
        head: EntryHead,
        right: Change,
        decision: Sequence[Change],
        keep: Callable[[EntryHead], bool] | None,
        landed: list[bool],
        swept: Swept,
    ) -> bool:
        workspace_id, entry_id = caller.workspace.id, head.entry_id
        for _ in range(3):
            # newest first: the first transaction, the tombstone's, blocks what the current text drew on
            records = list(entry_queries.entry_revisions(self._table, workspace_id, entry_id, newest_first=True))
            seed = head.source_slots if isinstance(head, EntryRecord) else ()
            first, *rest = batches(records, FORGET_BATCH, seed) or [[]]
            now = self._clock.now()
            blocks = Blocks(workspace_id, entry_id, now, caller.workspace.history_days)
            changes: list[Change] = [right, *decision, *self._removal(blocks, head, first, seed)]
            if isinstance(head, EntryRecord):
                at, by, count = iso(now), caller.user_id, len(slots_of(records, seed))
                tombstone = Tombstone(entry_id, head.revision, head.scope, head.scope_owner, at, by, count or None)
                # an accepted forget proposal is an agent's: never over a pin (a person's own forget may)
                pin = False if decision else None
                changes.append(MoveEntryHead(tombstone.head_item(workspace_id), head.revision, pinned=pin))
                if head.key_slot is not None and self._holds_key(workspace_id, head.key_slot, entry_id):
                    changes.append(Delete(keys.entry_key(workspace_id, head.key_slot)))
            try:
                self._table.transact(changes)
            except TransactionCancelled as exc:
                if decision or Label.ACCESS in exc.failed():  # a lost write right is answered before the entry
                    raise refusal(self._table, self._limits, caller, exc, entry_id, agent=bool(decision)) from None
                fresh = entry_queries.entry_head(self._table, workspace_id, entry_id)
                if keep is not None and (fresh is None or not keep(fresh)):
                    return False  # a bulk forget leaves what no longer qualifies (or TTL already deleted)
                if fresh is None:
                    raise EntryNotFound("entry not found") from None
                head = fresh
                continue
            landed.append(True)
            swept.add(entry_id, [*records, *([head] if isinstance(head, EntryRecord) else [])])
            for batch in rest:
                self._table.transact([right, *self._removal(blocks, head, batch)])
            return True
        raise Conflict("the entry kept changing while it was forgotten; try again")

    def _removal(
        self, blocks: Blocks, head: EntryHead, batch: Sequence[EntryRecord], seed: Sequence[str] = ()
    ) -> list[Change]:
        """One batch of a chain's revisions deleted, the count given back, and what they drew on blocked."""
        workspace_id, entry_id = blocks.workspace_id, blocks.entry_id
        if not batch:
            return blocks.of(seed)
        return [
            *(Delete(keys.entry_revision(workspace_id, entry_id, r.revision)) for r in batch),
            self._limits.versions(workspace_id, -len(batch), head.scope, head.scope_owner),
            *blocks.of(slots_of(batch, seed)),
        ]
