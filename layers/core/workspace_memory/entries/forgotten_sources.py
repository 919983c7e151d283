"""What forgetting blocks (docs/architecture.md#forgetting-an-entry, decisions/0074): a forgotten fact is not
saved again by an agent from where it came.

Every revision records, as HMACs under the entry key secret (`sourceSlots`), what it drew on: each source it
cites (kind and ref) and, for an agent's, the admission of its turn. Forgetting the chain writes one block item
per slot (`ENTRYBLOCK#{hmac}`) in the very transaction that deletes the revision, with the workspace's
`historyDays` as its window; an agent's save states, in its own transaction, that none of its own slots is
blocked (`SourceNotForgotten`), so a forget landing first refuses it (409 `SOURCE_FORGOTTEN`) and nothing is
written. A person's write states nothing of the kind: a person may write down again what they choose.

The forget also closes the pending candidates that would carry the text on: every candidate naming the chain
(a save over it, a forget proposal) and every save candidate of a turn that wrote a revision of it, decided
`rejected` (`rejectedFor: entry-forgotten`) with its sealed text dropped."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from workspace_memory.entries.key_secret import KeySecret
from workspace_memory.entries.model import AGENT_AUTHOR, Source
from workspace_memory.kernel.clock import DAY_SECONDS, iso
from workspace_memory.kernel.terms import CandidateKind, CandidateStatus, RejectedFor
from workspace_memory.store import entry_queries
from workspace_memory.store.changes import Change, Label, Put, ReplaceRevision, SourceNotForgotten
from workspace_memory.store.entry_records import EntryRecord, forgotten_source_item
from workspace_memory.store.ports import Table, TransactionCancelled

ADMISSION_SOURCE = "admission"
"""The kind under which a turn's admission is hashed beside the cited sources' kinds (`entry`, `document-version`)."""


def source_slots(
    key_secret: KeySecret, workspace_id: str, sources: Sequence[Source], admission_id: str | None
) -> tuple[str, ...]:
    """The HMACs of what a revision (or a save) draws on: each cited (kind, ref) once, and the turn's admission
    when an agent writes. Nothing drawn on: no slot, and the secret is not touched."""
    drawn = dict.fromkeys((source.kind.value, source.ref) for source in sources)
    if admission_id is not None:
        drawn[(ADMISSION_SOURCE, admission_id)] = None
    return tuple(key_secret.source(workspace_id, kind, ref) for kind, ref in drawn)


def unforgotten(workspace_id: str, slots: Iterable[str], now: float) -> list[Change]:
    """The conditions an agent's save carries: no forget blocked any of `slots` (one check per distinct slot)."""
    return [SourceNotForgotten(workspace_id, slot, int(now)) for slot in dict.fromkeys(slots)]


@dataclass(frozen=True)
class Blocks:
    """What a forget writes for the slots of the revisions it deletes: the block items, their window (`ttl`)."""

    workspace_id: str
    entry_id: str
    at: float
    history_days: int

    def of(self, slots: Iterable[str]) -> list[Change]:
        ttl = int(self.at) + self.history_days * DAY_SECONDS
        at = iso(self.at)
        items = (forgotten_source_item(self.workspace_id, slot, self.entry_id, at, ttl) for slot in slots)
        return [Put(item, Label.SOURCE_FORGOTTEN) for item in items]


def batches(records: Sequence[EntryRecord], limit: int, seed: Iterable[str] = ()) -> list[list[EntryRecord]]:
    """`records` cut into batches whose deletes and distinct slots (the first batch's with `seed`) stay within
    `limit` actions: a revision's blocks land in the transaction that deletes it, never after."""
    cut: list[list[EntryRecord]] = []
    batch: list[EntryRecord] = []
    slots: set[str] = set(seed)
    for record in records:
        more = slots | set(record.source_slots)
        if batch and len(batch) + 1 + len(more) > limit:
            cut.append(batch)
            batch, more = [], set(record.source_slots)
        batch.append(record)
        slots = more
    if batch or slots:
        cut.append(batch)
    return cut


def slots_of(records: Iterable[EntryRecord], seed: Iterable[str] = ()) -> list[str]:
    return list(dict.fromkeys([*seed, *(slot for record in records for slot in record.source_slots)]))


@dataclass
class Swept:
    """The chains a forget (or one pass of a bulk forget) forgot, and the admissions of the turns that wrote
    them: whose pending candidates are closed once it landed."""

    entry_ids: set[str] = field(default_factory=set)
    admissions: set[str] = field(default_factory=set)

    def add(self, entry_id: str, records: Iterable[EntryRecord]) -> None:
        self.entry_ids.add(entry_id)
        self.admissions |= {r.admission_id for r in records if r.author_kind == AGENT_AUTHOR and r.admission_id}


def close_candidates(table: Table, workspace_id: str, by: str, swept: Swept, now: float) -> tuple[str, ...]:
    """Every pending candidate naming a forgotten chain, and every save candidate of a turn that wrote one,
    decided `rejected` for the forget, its text dropped, compare-and-set (one decided meanwhile is left)."""
    if not swept.entry_ids:
        return ()
    closed: list[str] = []
    for _, record in entry_queries.candidates(table, workspace_id):
        if record.status is not CandidateStatus.PENDING or record.expired(now):
            continue
        named = record.entry_id is not None and record.entry_id in swept.entry_ids
        same_turn = record.kind is CandidateKind.SAVE and record.admission_id in swept.admissions
        if not (named or same_turn):
            continue
        decided = replace(
            record,
            ciphertext=None,
            status=CandidateStatus.REJECTED,
            revision=record.revision + 1,
            decided_by=by,
            decided_at=iso(now),
            rejected_for=RejectedFor.ENTRY_FORGOTTEN,
        )
        try:
            table.transact([ReplaceRevision(decided.to_item(workspace_id), record.revision, Label.CANDIDATE)])
        except TransactionCancelled:
            continue  # decided (or changed) meanwhile
        closed.append(record.candidate_id)
    return tuple(closed)
