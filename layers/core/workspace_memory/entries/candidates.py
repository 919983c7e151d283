"""Candidates (docs/architecture.md#candidates): an agent's entry write in `read_only`, or any agent's
`forget_memory`, held for a human to decide. A candidate is sealed, redacted and rate limited like the write it
proposes; accepting one goes through the very writes (or the very forget) a person's request would, with the
decision in the same transaction; a decided candidate keeps no text."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace

from workspace_memory.entries.candidate_diff import CandidateDiff, candidate_diff
from workspace_memory.entries.forget import EntryForgetting
from workspace_memory.entries.limits import Limits
from workspace_memory.entries.model import (
    Author,
    CandidateView,
    Draft,
    EntryText,
    Evidence,
    PossibleConflict,
    Written,
    candidate_context,
)
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.refusals import refusal
from workspace_memory.entries.retire import Retirement
from workspace_memory.entries.scopes import candidate_visible, owner_of, write_right
from workspace_memory.entries.validation import redacted, validate
from workspace_memory.entries.writes import EntryWrites
from workspace_memory.kernel.clock import DAY_SECONDS, Clock, iso
from workspace_memory.kernel.errors import CandidateNotFound, EntryPinned, StaleRevision
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.kernel.terms import CandidateKind, CandidateStatus, EntryScope, EntryType
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.changes import Change, Create, EntryNotPinned, Label, MemberExists, ReplaceRevision
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.store.entry_records import CandidateRecord, EntryRecord
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller, load_caller

CANDIDATE_TTL_SECONDS = 30 * DAY_SECONDS
RETIRING = frozenset({CandidateKind.MERGE, CandidateKind.SUPERSEDE})
"""Consolidation's proposals: accepting one retires the chain into another (`entries/retire.py`)."""


def _unseen_chain(head: EntryRecord) -> None:
    """Accepting a candidate made while its key was free, now that a chain holds the key: never a silent overwrite
    of text the candidate (and the person deciding it) did not see."""
    raise StaleRevision("the key now names an entry the candidate did not supersede", current_revision=head.revision)


def _not_pinned(head: EntryRecord) -> None:
    """An agent's proposal over a chain, or a person accepting one, meets no pin (decisions/0064)."""
    if head.pinned:
        raise EntryPinned("the entry is pinned: agents may read it, not propose over it")


class Candidates:
    def __init__(
        self,
        table: Table,
        cipher: Cipher,
        clock: Clock,
        limits: Limits,
        reads: EntryReads,
        writes: EntryWrites,
        forgetting: EntryForgetting,
    ) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._limits = limits
        self._reads = reads
        self._writes = writes
        self._forgetting = forgetting
        self._retirement = Retirement(table, clock, limits, reads)

    # -- proposals -------------------------------------------------------------------------------------

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
        """An agent's entry write in `read_only` (or in `auto` with `possible_conflicts`, decisions/0087): a
        candidate, redacted, rate limited, for a human to decide, keeping what it may contradict (ids only).
        With `fence` (the turn's authority re-stated, without the write right) in the same transaction; a failed
        fence raises `Fenced`. `candidate_id`, when the caller names it, lets the fence record it (an
        idempotency marker's answer)."""
        validate(draft)
        draft, _ = redacted(draft)
        caller, _ = load_caller(self._table, workspace_id, user_id)
        if entry_id is None and (held := self._writes.key_head(caller, draft)) is not None:
            # A key in use: the candidate names the chain and the revision it would supersede, now, so the person
            # deciding sees them and accepting never overwrites a revision the candidate did not see.
            entry_id, base_revision = held.entry_id, held.revision
            _not_pinned(held)
        now = self._clock.now()
        candidate_id = candidate_id or new_id("ec")
        owner = owner_of(caller, draft)
        payload = {
            "type": draft.type.value,
            "scope": draft.scope.value,
            "agent": draft.agent,
            "reason": draft.reason,
            "text": json.loads(draft.text.plaintext()),
        }
        sealed = seal(
            self._cipher, json.dumps(payload, ensure_ascii=False), candidate_context(workspace_id, candidate_id)
        )
        record = CandidateRecord(
            candidate_id=candidate_id,
            revision=1,
            status=CandidateStatus.PENDING,
            scope=draft.scope,
            scope_owner=owner,
            type=draft.type,
            proposed_by=user_id,
            created_at=iso(now),
            ttl=int(now) + CANDIDATE_TTL_SECONDS,
            ciphertext=sealed.ciphertext,
            admission_id=admission_id,
            entry_id=entry_id,
            base_revision=None if entry_id is None else base_revision or 0,
            possible_conflicts=tuple(c.cited for c in possible_conflicts),
        )
        author = Author(user_id, "agent", admission_id, rated=True)
        changes: list[Change] = [
            Create(record.to_item(workspace_id), Label.CANDIDATE),
            MemberExists(workspace_id, user_id),
            *([] if entry_id is None else [EntryNotPinned(workspace_id, entry_id)]),
            *self._limits.rated(self._table, workspace_id, author, now),
            *(fence or ()),
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, None, fenced=fence is not None) from None
        return candidate_id

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
        """An agent's `forget_memory`: a candidate of kind `forget` naming the chain and the revision the agent
        saw (its head now), holding no text, rate limited like any agent write, with `fence` (the turn's authority
        re-stated) in the same transaction; a failed fence raises `Fenced`. An entry the agent's user may not see
        is not found, as a missing one; `member_check` adds the user's membership when the fence does not state
        the write right (a transaction touches the member item once)."""
        workspace_id, user_id = caller.workspace.id, caller.user_id
        head = self._reads.live_head(caller, entry_queries.entry_head(self._table, workspace_id, entry_id))
        if guard is not None:  # judged on the revision the candidate names (`baseRevision`)
            guard(head)
        _not_pinned(head)
        now = self._clock.now()
        record = CandidateRecord(
            candidate_id=candidate_id or new_id("ec"),
            revision=1,
            status=CandidateStatus.PENDING,
            scope=head.scope,
            scope_owner=head.scope_owner,
            type=head.type,
            proposed_by=user_id,
            created_at=iso(now),
            ttl=int(now) + CANDIDATE_TTL_SECONDS,
            kind=CandidateKind.FORGET,
            admission_id=admission_id,
            entry_id=entry_id,
            base_revision=head.revision,
        )
        changes: list[Change] = [
            Create(record.to_item(workspace_id), Label.CANDIDATE),
            *([MemberExists(workspace_id, user_id)] if member_check else []),
            EntryNotPinned(workspace_id, entry_id),
            *self._limits.rated(self._table, workspace_id, Author(user_id, "agent", admission_id, rated=True), now),
            *fence,
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, None, fenced=True) from None
        return record.candidate_id

    # -- the pending list ------------------------------------------------------------------------------

    def pending(
        self, user_id: str, workspace_id: str, limit: int, cursor: str | None
    ) -> tuple[list[CandidateView], str | None]:
        caller, _ = load_caller(self._table, workspace_id, user_id)
        after = None if cursor is None else decode_cursor(cursor, keys.CANDIDATE_PREFIX)
        now = self._clock.now()
        views: list[CandidateView] = []
        stored = entry_queries.candidates(self._table, workspace_id, after=after)
        for position, record in stored:
            if record.status is not CandidateStatus.PENDING or record.expired(now):
                continue
            if not candidate_visible(caller, record):
                continue
            views.append(self._view(workspace_id, record))
            if len(views) == limit:
                more = next(stored, None) is not None
                return views, encode_cursor(position) if more else None
        return views, None

    def _open(self, workspace_id: str, record: CandidateRecord) -> Draft:
        assert record.ciphertext is not None  # a pending save candidate holds its draft
        context = candidate_context(workspace_id, record.candidate_id)
        raw = json.loads(unseal(self._cipher, record.ciphertext, context))
        text = EntryText.parse(json.dumps(raw["text"]))
        return Draft(EntryType(raw["type"]), text, EntryScope(raw["scope"]), raw.get("agent"), raw.get("reason"))

    def _view(self, workspace_id: str, record: CandidateRecord) -> CandidateView:
        if record.kind is CandidateKind.FORGET or record.kind in RETIRING:
            assert record.entry_id is not None  # a forget proposal names the chain and the revision
            assert record.base_revision is not None
            seen = self._reads.revision_text(workspace_id, record.entry_id, record.base_revision)
            scope, type_ = record.scope, record.type
            title, summary = (None, None) if seen is None else (seen.title, seen.summary)
            draft: Draft | None = None
        else:
            draft = self._open(workspace_id, record)
            scope, type_, title, summary = draft.scope, draft.type, draft.text.title, draft.text.summary
        return CandidateView(
            candidate_id=record.candidate_id,
            revision=record.revision,
            status=record.status,
            scope=scope,
            type=type_,
            title=title,
            summary=summary,
            entry_id=record.entry_id,
            base_revision=record.base_revision,
            proposed_by=record.proposed_by,
            created_at=record.created_at,
            kind=record.kind,
            body=None if draft is None else draft.text.body,
            key=None if draft is None else draft.text.key,
            sources=() if draft is None else draft.text.sources,
            diff=None if draft is None else self._diff(workspace_id, record, draft),
            evidence=_evidence(record),
            possible_conflicts=tuple(PossibleConflict.parse(c) for c in record.possible_conflicts),
        )

    def _diff(self, workspace_id: str, record: CandidateRecord, draft: Draft) -> CandidateDiff | None:
        """Against the revision a save candidate would supersede, while that revision is readable."""
        if record.entry_id is None or record.base_revision is None:
            return None
        found = entry_queries.entry_revision(self._table, workspace_id, record.entry_id, record.base_revision)
        if found is None or found.expired(self._clock.now()):
            return None
        head = entry_queries.entry_head(self._table, workspace_id, record.entry_id)
        current = isinstance(head, EntryRecord) and head.revision == record.base_revision
        before = self._reads.open(workspace_id, found)
        return candidate_diff(record.entry_id, record.base_revision, current, found.type, before, draft)

    # -- decisions -------------------------------------------------------------------------------------

    def _undecided(self, caller: Caller, revision: int, found: CandidateRecord | None) -> CandidateRecord:
        if found is None or found.expired(self._clock.now()) or not candidate_visible(caller, found):
            raise CandidateNotFound("candidate not found")
        if found.status is not CandidateStatus.PENDING or found.revision != revision:
            raise StaleRevision("the candidate was decided or changed", current_revision=found.revision)
        return found

    def _decided(self, workspace_id: str, record: CandidateRecord, status: CandidateStatus, by: str) -> ReplaceRevision:
        """The candidate's decision: its text dropped (a decided candidate keeps none), compare-and-set."""
        at = iso(self._clock.now())
        decided = replace(
            record, ciphertext=None, status=status, revision=record.revision + 1, decided_by=by, decided_at=at
        )
        return ReplaceRevision(decided.to_item(workspace_id), record.revision, Label.CANDIDATE)

    def accept(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> Written:
        """The candidate becomes an entry (or the next revision of its chain) through the same writes."""
        caller, (found,) = load_caller(
            self._table, workspace_id, user_id, [keys.entry_candidate(workspace_id, candidate_id)]
        )
        record = self._undecided(caller, revision, CandidateRecord.of(found))
        decision = [self._decided(workspace_id, record, CandidateStatus.ACCEPTED, user_id)]
        if record.kind is CandidateKind.FORGET:
            return self._accept_forget(caller, record, decision)
        if record.kind in RETIRING:
            return self._retirement.accept(caller, record, _evidence(record), decision)
        draft = self._open(workspace_id, record)
        author = Author(record.proposed_by, "agent", record.admission_id)
        if record.entry_id is None:
            return self._writes.new_chain(caller, draft, author, (), decision, guard=_unseen_chain)
        head = self._reads.live_head(caller, entry_queries.entry_head(self._table, workspace_id, record.entry_id))
        base = record.base_revision or 0
        return self._writes.next_revision(caller, head, base, draft, author, decision)

    def _accept_forget(self, caller: Caller, record: CandidateRecord, decision: Sequence[Change]) -> Written:
        """Forget the chain exactly as `DELETE …/entries/{id}` does, iff its head is still the revision the
        proposal saw (compare-and-set, also inside the first transaction): one that moved on or was forgotten
        meanwhile answers `STALE_REVISION` / `ENTRY_FORGOTTEN` and changes nothing, the candidate included."""
        assert record.entry_id is not None  # a forget proposal names the chain and the revision
        assert record.base_revision is not None
        workspace_id, entry_id, seen = caller.workspace.id, record.entry_id, record.base_revision
        head = self._reads.live_head(caller, entry_queries.entry_head(self._table, workspace_id, entry_id))
        if head.revision != seen:
            raise StaleRevision(
                f"the entry moved on from revision {seen}, which the proposal named", current_revision=head.revision
            )
        _not_pinned(head)
        right = write_right(caller, head.scope, head.scope_owner)
        self._forgetting.forget_chain(caller, head, right, decision=decision)
        return Written(entry_id, seen, forgotten=True)

    def dismiss_pending(self, caller: Caller, *, after: str | None, budget: int) -> tuple[tuple[str, ...], str | None]:
        """The owner's sweep of agent memories: pending candidates of every scope and member decided `rejected`
        without being read (their text dropped), at most `budget` examined after position `after`; one decided
        meanwhile is left as it is. Returns the ids dismissed and the last position examined (None at the end)."""
        workspace_id, now = caller.workspace.id, self._clock.now()
        dismissed: list[str] = []
        examined = 0
        for position, record in entry_queries.candidates(self._table, workspace_id, after=after):
            if examined == budget:
                return tuple(dismissed), after
            examined, after = examined + 1, position
            if record.expired(now) or record.status is not CandidateStatus.PENDING:
                continue  # decided, or gone for good
            decided = self._decided(workspace_id, record, CandidateStatus.REJECTED, caller.user_id)
            try:
                self._table.transact([decided, caller.still_owner()])
            except TransactionCancelled as exc:
                if Label.ACCESS in exc.failed():
                    raise refusal(self._table, self._limits, caller, exc, None) from None
                continue  # decided (or expired) meanwhile
            dismissed.append(record.candidate_id)
        return tuple(dismissed), None

    def reject(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> None:
        caller, (found,) = load_caller(
            self._table, workspace_id, user_id, [keys.entry_candidate(workspace_id, candidate_id)]
        )
        record = self._undecided(caller, revision, CandidateRecord.of(found))
        right = write_right(caller, record.scope, record.scope_owner)
        try:
            self._table.transact([self._decided(workspace_id, record, CandidateStatus.REJECTED, user_id), right])
        except TransactionCancelled as exc:
            raise refusal(self._table, self._limits, caller, exc, None) from None


def _evidence(record: CandidateRecord) -> Evidence | None:
    if record.keeper_id is None or record.keeper_revision is None or record.rule is None:
        return None
    return Evidence(record.keeper_id, record.keeper_revision, record.rule, record.run_id)
