"""Writing entries: a new chain (a key already in use in the scope supersedes that chain instead) or the next
revision of one, each in one transaction with the writer's right, the caps, and for an agent's write in
`auto` the fence (the turn's authority re-stated). The revision's search vector is made once, here.

An agent-written revision carries its expiry as an active memory (`ttl`: its time plus the workspace's
`agentDays`, on the head and the revision item alike), so an agent memory no one renews ends by TTL and reads
judge it gone at once; a person's revision carries none (docs/architecture.md#retention)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from workspace_memory.entries.conflicts import WriteCheck
from workspace_memory.entries.forgotten_sources import source_slots
from workspace_memory.entries.key_secret import KeySecret
from workspace_memory.entries.limits import Limits
from workspace_memory.entries.model import (
    AGENT_AUTHOR,
    PREVIOUSLY_MAX_CHARS,
    Author,
    Draft,
    EntryText,
    PossibleConflict,
    Previously,
    SealedVector,
    Written,
    agent_expiry,
    entry_context,
)
from workspace_memory.entries.reads import EntryReads
from workspace_memory.entries.refusals import refusal
from workspace_memory.entries.scopes import owner_of, rights
from workspace_memory.entries.validation import redaction_warnings, validate
from workspace_memory.governance.redaction import Finding
from workspace_memory.kernel.clock import DAY_SECONDS, Clock, epoch_seconds, iso
from workspace_memory.kernel.errors import Conflict, EntryPinned, StaleRevision
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.sealed import seal
from workspace_memory.kernel.terms import EntryScope, EntryStatus
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.changes import (
    Change,
    Create,
    Label,
    MoveEntryHead,
    RetentionIs,
    SupersedeEntryRevision,
    TakeKeySlot,
)
from workspace_memory.store.entry_records import EntryRecord, head_of, key_slot_item
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller, load_caller

if TYPE_CHECKING:
    from workspace_memory.search.engine import Embedder

Answer = Callable[[Written], Change]
"""What a write's own transaction records of what it writes (an agent write's idempotency marker, its ids in)."""


def answered(answer: Answer | None, written: Written) -> list[Change]:
    return [] if answer is None else [answer(written)]


def _superseding(answer: Answer) -> Answer:
    """A create that found its key in use writes the next revision of that chain: its answer says so."""
    return lambda written: answer(replace(written, superseded=True))


class EntryWrites:
    def __init__(
        self,
        table: Table,
        cipher: Cipher,
        clock: Clock,
        limits: Limits,
        key_secret: KeySecret,
        reads: EntryReads,
        embedder: Embedder | None = None,
        check: WriteCheck | None = None,
    ) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._limits = limits
        self._key_secret = key_secret
        self._reads = reads
        self._embedder = embedder
        self.check = check if check is not None else WriteCheck(embedder)
        """The contradiction check a person's write is answered with (decisions/0087)."""

    def create(self, user_id: str, workspace_id: str, draft: Draft) -> Written:
        """A new chain; a key already in use in the scope supersedes that chain instead (docs/architecture.md#keys).
        Written whatever it may contradict (a person decides), and answered with that."""
        validate(draft)
        caller, (counter,) = load_caller(self._table, workspace_id, user_id, [keys.entry_counter(workspace_id)])
        draft, conflicts = self.check.check(caller, counter, draft)
        written = self.new_chain(caller, draft, Author(user_id), redaction_warnings(draft), [])
        return replace(written, possible_conflicts=conflicts)

    def create_fenced(
        self,
        caller: Caller,
        draft: Draft,
        author: Author,
        fence: Sequence[Change],
        guard: Callable[[EntryRecord], None] | None = None,
        answer: Answer | None = None,
    ) -> Written:
        """An agent's write in `auto`: the entry writes and `fence` (the turn's authority re-stated, its write
        right and retention included) in one transaction; a failed fence raises `Fenced`. `guard` sees the head
        of a chain the key would supersede before it is (a rule may need a quote); `answer` is what the same
        transaction records of what it writes (an idempotency marker)."""
        validate(draft)
        return self.new_chain(caller, draft, author, (), [], fence=fence, guard=guard, answer=answer)

    def supersede(self, user_id: str, workspace_id: str, entry_id: str, draft: Draft, base: int) -> Written:
        """The next revision of a chain, iff its head is still at `base` (`X-Base-Revision`). A head refused at
        `base` itself moved only its pin (the person's revision carries the pin as read): judged again on it."""
        validate(draft)
        conflicts: tuple[PossibleConflict, ...] | None = None
        wanted = [keys.entry(workspace_id, entry_id), keys.entry_counter(workspace_id)]
        for attempt in range(3):
            caller, (found, counter) = load_caller(self._table, workspace_id, user_id, wanted)
            head = self._reads.live_head(caller, head_of(found))
            if attempt == 0:  # judged once: a retry only re-reads a pin that moved
                draft, conflicts = self.check.check(caller, counter, draft, entry_id=entry_id)
            try:
                written = self.next_revision(caller, head, base, draft, Author(user_id), [])
            except StaleRevision as exc:
                if head.revision != base or exc.details.get("current_revision") != base:
                    raise
                continue
            return replace(written, warnings=redaction_warnings(draft), possible_conflicts=conflicts)
        raise Conflict("the entry's pin kept changing; try again")

    def key_head(self, caller: Caller, draft: Draft) -> EntryRecord | None:
        """The head of the active chain `draft`'s key names in its scope, if any: what writing it would supersede
        (an expired agent memory is none: writing the key takes its slot over for a new chain)."""
        workspace_id = caller.workspace.id
        if draft.text.key is None or entry_queries.key_secret(self._table, workspace_id) is None:
            return None  # no key, or no key ever used in the workspace (the secret is made at first use)
        slot = self._key_secret.slot(workspace_id, draft.scope, owner_of(caller, draft), draft.text.key)
        holder = entry_queries.key_holder(self._table, workspace_id, slot)
        head = None if holder is None else entry_queries.entry_head(self._table, workspace_id, holder)
        return head if isinstance(head, EntryRecord) and not head.expired(self._clock.now()) else None

    def new_chain(
        self,
        caller: Caller,
        draft: Draft,
        author: Author,
        warnings: tuple[Finding, ...],
        extra: Sequence[Change],
        *,
        fence: Sequence[Change] | None = None,
        guard: Callable[[EntryRecord], None] | None = None,
        answer: Answer | None = None,
    ) -> Written:
        """Revision 1 of a new chain, with `extra` (an accepted candidate's decision) and `answer` of what is
        written in its transaction."""
        workspace_id = caller.workspace.id
        owner = owner_of(caller, draft)
        checks = rights(caller, draft.scope, owner, fence)
        expired_holder: str | None = None
        for _ in range(3):
            entry_id = new_id("en")
            now = self._clock.now()
            record = self._revision(caller, entry_id, 1, draft, author, now, draft.scope, owner)
            changes: list[Change] = [
                Create(record.head_item(workspace_id), Label.ENTRY),
                Create(record.revision_item(workspace_id), Label.ENTRY),
                self._limits.versions(workspace_id, 1, draft.scope, owner),
                *checks,
                *self._limits.rated(self._table, workspace_id, author, now),
                *extra,
                *(fence or ()),
                *answered(answer, Written(entry_id, 1)),
            ]
            if record.key_slot is not None:
                slot = key_slot_item(workspace_id, record.key_slot, entry_id)
                take = Create(slot, Label.ENTRY_KEY) if expired_holder is None else TakeKeySlot(slot, expired_holder)
                changes.append(take)
            try:
                self._table.transact(changes)
                return Written(entry_id, 1, warnings=warnings)
            except TransactionCancelled as exc:
                if exc.failed() != {Label.ENTRY_KEY}:
                    raise self._refused(caller, exc, None, fence) from None
            assert record.key_slot is not None  # only a key slot can fail alone
            holder = entry_queries.key_holder(self._table, workspace_id, record.key_slot)
            head = None if holder is None else entry_queries.entry_head(self._table, workspace_id, holder)
            expired_holder = None
            if holder is not None and (head is None or (isinstance(head, EntryRecord) and head.expired(now))):
                expired_holder = holder  # an agent memory that expired holds the key: take it over
                continue
            if not isinstance(head, EntryRecord):
                continue  # the holder was forgotten in between: create again
            if guard is not None:
                guard(head)
            superseding = None if answer is None else _superseding(answer)
            try:
                written = self.next_revision(
                    caller, head, head.revision, draft, author, extra, fence=fence, answer=superseding
                )
            except StaleRevision:
                continue
            return replace(written, superseded=True, warnings=warnings)
        raise Conflict("the key kept changing concurrently; try again")

    def next_revision(
        self,
        caller: Caller,
        head: EntryRecord,
        base: int,
        draft: Draft,
        author: Author,
        extra: Sequence[Change],
        *,
        fence: Sequence[Change] | None = None,
        answer: Answer | None = None,
    ) -> Written:
        """Scope, owner and key are the chain's: a revision changes type and text only. With `fence`, the
        fence re-states the write right and the retention (its workspace check carries the days). An agent's
        text never lands on a pinned chain; a person's keeps the pin, and any revision drops the verification
        (it vouched for text that is no longer current)."""
        workspace_id, entry_id = caller.workspace.id, head.entry_id
        checks = rights(caller, head.scope, head.scope_owner, fence)
        if head.revision != base:
            raise StaleRevision(f"base revision {base} is not the current revision", current_revision=head.revision)
        agent = author.kind == "agent"
        if agent and head.pinned:
            raise EntryPinned("the entry is pinned: agents may read it, not write over it")
        now = self._clock.now()
        before = self._reads.open(workspace_id, head)
        previously = Previously(before.summary[:PREVIOUSLY_MAX_CHARS], iso(now))  # one hop: not its own note
        text = replace(draft.text, key=before.key, reason=draft.reason, previously=previously)
        revision = base + 1
        made = self._revision(
            caller, entry_id, revision, replace(draft, text=text), author, now, head.scope, head.scope_owner
        )
        record = replace(
            made,
            key_lookup=head.key_lookup if head.key_lookup is not None else made.key_lookup,
            key_slot=head.key_slot if head.key_slot is not None else made.key_slot,
        )
        moved = replace(record, read_count=head.read_count, last_read_at=head.last_read_at, pinned=head.pinned)
        days, agent_days = caller.workspace.history_days, caller.workspace.agent_days
        at = record.valid_from
        changes: list[Change] = [
            Create(record.revision_item(workspace_id), Label.ENTRY),
            MoveEntryHead(moved.head_item(workspace_id), base, pinned=head.pinned),
            SupersedeEntryRevision(workspace_id, entry_id, base, revision, at, epoch_seconds(at) + days * DAY_SECONDS),
            self._limits.versions(workspace_id, 1, head.scope, head.scope_owner),
            *([RetentionIs(workspace_id, days, agent_days)] if fence is None else []),
            *checks,
            *self._limits.rated(self._table, workspace_id, author, now),
            *extra,
            *(fence or ()),
            *answered(answer, Written(entry_id, revision)),
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise refusal(
                self._table, self._limits, caller, exc, entry_id, fenced=fence is not None, agent=agent
            ) from None
        return Written(entry_id, revision)

    def _refused(
        self,
        caller: Caller,
        exc: TransactionCancelled,
        entry_id: str | None,
        fence: Sequence[Change] | None,
    ) -> Exception:
        return refusal(self._table, self._limits, caller, exc, entry_id, fenced=fence is not None)

    def _vector(self, text: EntryText) -> SealedVector | None:
        """The revision's search vector, computed once at write time (docs/architecture.md#the-search-engine): search
        never re-embeds it."""
        if self._embedder is None:
            return None
        from workspace_memory.search.engine import embedding_text, pack_vector

        vector = self._embedder.embed([embedding_text(text.title, text.summary, text.body)])[0]
        return SealedVector(self._embedder.model_id, pack_vector(vector))

    def _revision(
        self,
        caller: Caller,
        entry_id: str,
        revision: int,
        draft: Draft,
        author: Author,
        now: float,
        scope: EntryScope,
        owner: str,
    ) -> EntryRecord:
        workspace_id = caller.workspace.id
        sealed = seal(
            self._cipher,
            draft.text.plaintext(draft.vector if draft.vector is not None else self._vector(draft.text)),
            entry_context(workspace_id, entry_id, revision),
        )
        key, agent = draft.text.key, author.kind == AGENT_AUTHOR
        drawn = source_slots(self._key_secret, workspace_id, draft.text.sources, author.admission_id if agent else None)
        return EntryRecord(
            entry_id=entry_id,
            revision=revision,
            scope=scope,
            scope_owner=owner,
            type=draft.type,
            status=EntryStatus.ACTIVE,
            ciphertext=sealed.ciphertext,
            sha256=sealed.sha256,
            valid_from=iso(now),
            author=author.user_id,
            author_kind=author.kind,
            admission_id=author.admission_id,
            key_lookup=None if key is None else self._key_secret.lookup(workspace_id, key),
            key_slot=None if key is None else self._key_secret.slot(workspace_id, scope, owner, key),
            ttl=agent_expiry(iso(now), caller.workspace.agent_days) if agent else None,
            source_slots=drawn,
        )
