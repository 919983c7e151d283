"""A person's marks on an entry (decisions/0064): the pin, which keeps agents from writing over a chain, and the
verification, which says who last confirmed the current revision still holds. Both are the head's attributes,
set by compare-and-set on the revision the person saw (`X-Base-Revision`), with the write right in the same
transaction; neither is a revision, so nothing is sealed, the history does not move and search is not stale."""

from __future__ import annotations

from collections.abc import Sequence

from workspace_memory.entries.limits import Limits
from workspace_memory.entries.model import Author, Marked, Source
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.refusals import refusal
from workspace_memory.entries.scopes import write_right
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import EntryPinned, EvidenceNotCurrent, StaleRevision
from workspace_memory.kernel.terms import CitationState
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.changes import Change, MarkEntryHead
from workspace_memory.store.entry_records import head_of
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller, load_caller
from workspace_memory.workspaces.key_binding import KeyBinding


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
        evidence = None if verify else head.verified_evidence
        return Marked(entry_id, base, head.pinned if pinned is None else pinned, at, by, evidence)

    def verify_by_agent(
        self,
        caller: Caller,
        entry_id: str,
        base: int,
        evidence: Sequence[Source],
        author: Author,
        fence: Sequence[Change],
        within: KeyBinding | None = None,
    ) -> Marked:
        """An agent of `caller` confirms revision `base`, the current one, still holds, on `evidence`: cited
        sources it read, each re-checked now against the text it hashed (`ok`, else 409 `EVIDENCE_NOT_CURRENT`).
        Never on a pinned chain; rate limited like any agent write; with `fence` (the turn's authority)."""
        workspace_id = caller.workspace.id
        head = self._reads.live_head(caller, entry_queries.entry_head(self._table, workspace_id, entry_id))
        self._reads.require_within(workspace_id, head, within)
        if head.pinned:
            raise EntryPinned("the entry is pinned: agents may read it, not mark it")
        if head.revision != base:
            raise StaleRevision(f"base revision {base} is not the current revision", current_revision=head.revision)
        states = self._reads.judge(caller, evidence, within)
        if any(state is not CitationState.OK for state in states):
            raise EvidenceNotCurrent(
                "evidence must be cited text that still reads as it was hashed", states=[s.value for s in states]
            )
        now = self._clock.now()
        verified = (iso(now), caller.user_id)
        mark = MarkEntryHead(workspace_id, entry_id, base, None, verified, evidence=len(evidence))
        try:
            self._table.transact([mark, *self._limits.rated(self._table, workspace_id, author, now), *fence])
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, entry_id, fenced=True, agent=True) from None
        return Marked(entry_id, base, False, verified[0], verified[1], len(evidence))
