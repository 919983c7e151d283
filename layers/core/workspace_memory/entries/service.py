"""Memory entries (docs/architecture.md#entries): small titled memories beside the document, in supersession chains.

A chain keeps one `entryId`; each write is a new immutable revision item (`ENTRYREV#{id}#{rev}`) and the
head (`ENTRY#{id}`) carries the current revision's ciphertext, so a read is one round trip and one Query of
the `ENTRY#` prefix lists heads only. Every write is one transaction: the head moves from exactly the base
revision (two writers from one base: one wins, the chain never forks), the revision is created, the
predecessor is marked superseded with its retention `ttl`, the workspace's version counter stays under the
cap, and the writer still has the right to write. Text (key, title, summary, body, sources) is sealed under
the workspace's branch key; a key is found by an HMAC under a per-workspace secret that is itself sealed
under the branch key (so deleting the workspace's key shreds it too). Forget deletes every revision and
leaves a text-free tombstone head; the owner may forget all of one member's private entries, or every agent
memory of the workspace, without reading them.

`EntryService` is the context's one entry point (the routes, the agent's tools, the scripts): it composes
the parts, each in its module, and delegates: reads, writes, a person's marks (pin, verification), forget,
candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from workspace_memory.entries.agent_memories import AgentMemories, AgentMemoriesForgotten
from workspace_memory.entries.candidates import Candidates
from workspace_memory.entries.citations import Citations
from workspace_memory.entries.conflicts import WriteCheck
from workspace_memory.entries.forget import EntryForgetting
from workspace_memory.entries.forgotten_sources import source_slots, unforgotten
from workspace_memory.entries.index import Budget, IndexLines, recall_sections
from workspace_memory.entries.key_secret import KeySecret
from workspace_memory.entries.limits import AGENT_WRITES_PER_HOUR, ENTRY_VERSION_CAP, Limits
from workspace_memory.entries.marks import EntryMarks
from workspace_memory.entries.model import (
    Author,
    CandidateView,
    Draft,
    EntryView,
    Filters,
    Marked,
    Page,
    PossibleConflict,
    Source,
    Written,
)
from workspace_memory.entries.read_counts import ReadCounts
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.writes import Answer, EntryWrites
from workspace_memory.kernel.clock import Clock
from workspace_memory.store.changes import Change
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.workspaces.access import Caller, load_caller
from workspace_memory.workspaces.key_binding import KeyBinding

if TYPE_CHECKING:
    from workspace_memory.search.engine import Embedder


class EntryService:
    def __init__(
        self,
        table: Table,
        cipher: Cipher,
        clock: Clock,
        *,
        version_cap: int = ENTRY_VERSION_CAP,
        agent_writes_per_hour: int = AGENT_WRITES_PER_HOUR,
        embedder: Embedder | None = None,
    ) -> None:
        self.limits = Limits(version_cap, agent_writes_per_hour)
        """The caps every part holds its writes to (one object: lowering the rate lowers it for all)."""
        key_secret = self._key_secret = KeySecret(table, cipher)
        self._counts = ReadCounts(table, clock)
        self._citations = Citations(table, cipher)
        """One judgement of citations (and its cache of cited digests) for reads, the list and its budgets."""
        self._reads = EntryReads(table, cipher, clock, key_secret, self._counts, self._citations)
        self.write_check = WriteCheck(embedder)
        """The contradiction check (decisions/0087); its `finder` is the search service's, set by bootstrap."""
        self._writes = EntryWrites(
            table, cipher, clock, self.limits, key_secret, self._reads, embedder, self.write_check
        )
        self._forgetting = EntryForgetting(table, clock, self.limits, self._reads)
        self._marks = EntryMarks(table, clock, self.limits, self._reads)
        self._candidates = Candidates(table, cipher, clock, self.limits, self._reads, self._writes, self._forgetting)
        self._agent_memories = AgentMemories(table, self._forgetting, self._candidates)
        self._table, self._cipher, self._clock = table, cipher, clock
        self._rule_lines, self._index_lines = IndexLines(), IndexLines()

    # -- reads -----------------------------------------------------------------------------------------

    def read(
        self,
        user_id: str,
        workspace_id: str,
        entry_id: str,
        as_of: float | None = None,
        within: KeyBinding | None = None,
    ) -> EntryView:
        return self._reads.read(user_id, workspace_id, entry_id, as_of, within)

    def list_entries(
        self,
        user_id: str,
        workspace_id: str,
        filters: Filters,
        limit: int,
        cursor: str | None,
        within: KeyBinding | None = None,
    ) -> Page:
        return self._reads.list_entries(user_id, workspace_id, filters, limit, cursor, within)

    def recall_budgets(self, user_id: str, workspace_id: str) -> tuple[Budget, Budget]:
        """What the rules block and the index of the caller's turns spend of their budgets (rules, index), as
        recall builds them now; a non-member gets WorkspaceNotFound. Counts only: the lines are not returned."""
        load_caller(self._table, workspace_id, user_id)
        now = self._clock.now()
        return recall_sections(
            self._table,
            self._cipher,
            workspace_id,
            user_id,
            now=now,
            rule_lines=self._rule_lines,
            index_lines=self._index_lines,
            citations=self._citations,
        ).budgets

    def history(self, user_id: str, workspace_id: str, entry_id: str, limit: int, cursor: str | None) -> Page:
        return self._reads.history(user_id, workspace_id, entry_id, limit, cursor)

    def flush_read_counts(self) -> None:
        """Wait for the pending read-count bumps (tests; a graceful shutdown)."""
        self._counts.flush()

    # -- writes ----------------------------------------------------------------------------------------

    def create(self, user_id: str, workspace_id: str, draft: Draft) -> Written:
        return self._writes.create(user_id, workspace_id, draft)

    def create_fenced(
        self,
        caller: Caller,
        draft: Draft,
        author: Author,
        fence: Sequence[Change],
        guard: Callable[[EntryRecord], None] | None = None,
        answer: Answer | None = None,
    ) -> Written:
        return self._writes.create_fenced(caller, draft, author, fence, guard, answer)

    def not_forgotten(
        self, workspace_id: str, sources: Sequence[Source], admission_id: str, now: float
    ) -> list[Change]:
        """What an agent's save states in its own transaction: no forget blocked a source it cites, nor the turn
        it comes from (decisions/0074); a forget that lands first refuses it with `SOURCE_FORGOTTEN`."""
        return unforgotten(workspace_id, source_slots(self._key_secret, workspace_id, sources, admission_id), now)

    def supersede(self, user_id: str, workspace_id: str, entry_id: str, draft: Draft, base: int) -> Written:
        return self._writes.supersede(user_id, workspace_id, entry_id, draft, base)

    def revert(self, user_id: str, workspace_id: str, entry_id: str, revision: int, base: int) -> Written:
        """Undo for an entry: a new revision on `base` with an earlier revision's type and text (its citations
        and key too); the history keeps every revision, and the chain never forks (`STALE_REVISION`)."""
        earlier = self._reads.earlier_revision(user_id, workspace_id, entry_id, revision)
        text = replace(self._reads.open(workspace_id, earlier), reason=None, previously=None)
        draft = Draft(earlier.type, text, reason=f"reverted to revision {revision}")
        return self._writes.supersede(user_id, workspace_id, entry_id, draft, base)

    # -- marks -----------------------------------------------------------------------------------------

    def pin(self, user_id: str, workspace_id: str, entry_id: str, base: int, *, pinned: bool) -> Marked:
        return self._marks.pin(user_id, workspace_id, entry_id, base, pinned=pinned)

    def verify(self, user_id: str, workspace_id: str, entry_id: str, base: int) -> Marked:
        return self._marks.verify(user_id, workspace_id, entry_id, base)

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
        return self._marks.verify_by_agent(caller, entry_id, base, evidence, author, fence, within)

    # -- forget ----------------------------------------------------------------------------------------

    def forget(self, user_id: str, workspace_id: str, entry_id: str) -> None:
        self._forgetting.forget(user_id, workspace_id, entry_id)

    def forget_member(self, user_id: str, workspace_id: str, member_id: str) -> int:
        return self._forgetting.forget_member(user_id, workspace_id, member_id)

    @property
    def forgetting(self) -> EntryForgetting:
        """The one forget path, for a member's erasure (which forgets their private entries in batches)."""
        return self._forgetting

    def forget_agent_memories(self, user_id: str, workspace_id: str, cursor: str | None) -> AgentMemoriesForgotten:
        return self._agent_memories.forget_all(user_id, workspace_id, cursor)

    # -- candidates ------------------------------------------------------------------------------------

    def propose(
        self,
        user_id: str,
        workspace_id: str,
        draft: Draft,
        *,
        admission_id: str | None = None,
        entry_id: str | None = None,
        base_revision: int | None = None,
        fence: Sequence[Change] | None = None,
        candidate_id: str | None = None,
        possible_conflicts: Sequence[PossibleConflict] = (),
    ) -> str:
        return self._candidates.propose(
            user_id,
            workspace_id,
            draft,
            admission_id=admission_id,
            entry_id=entry_id,
            base_revision=base_revision,
            fence=fence,
            candidate_id=candidate_id,
            possible_conflicts=possible_conflicts,
        )

    def propose_forget(
        self,
        caller: Caller,
        entry_id: str,
        admission_id: str,
        fence: Sequence[Change],
        *,
        member_check: bool,
        candidate_id: str | None = None,
        guard: Callable[[EntryRecord], None] | None = None,
    ) -> str:
        return self._candidates.propose_forget(
            caller, entry_id, admission_id, fence, member_check=member_check, candidate_id=candidate_id, guard=guard
        )

    def candidates(
        self, user_id: str, workspace_id: str, limit: int, cursor: str | None
    ) -> tuple[list[CandidateView], str | None]:
        return self._candidates.pending(user_id, workspace_id, limit, cursor)

    def accept(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> Written:
        return self._candidates.accept(user_id, workspace_id, candidate_id, revision)

    def reject(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> None:
        self._candidates.reject(user_id, workspace_id, candidate_id, revision)
