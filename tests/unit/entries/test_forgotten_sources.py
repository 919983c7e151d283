"""What a forget blocks, over the in-memory table (decisions/0074): an agent's save citing a source a forgotten
chain cited, or coming from a turn that wrote it, is refused `SOURCE_FORGOTTEN` with nothing written, by a
condition of its own transaction; a person's write is not; the block ends with its window; and the forgotten
chain's pending candidates lose their text."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.memory_table import MemoryTable
from tests.unit.entries.test_entries_rules import EDITOR, OWNER, World, draft, make, snapshot
from workspace_memory.entries.model import Author, Source
from workspace_memory.kernel.clock import DAY_SECONDS
from workspace_memory.kernel.errors import SourceForgotten, StaleRevision
from workspace_memory.kernel.terms import CandidateStatus, CitationKind, EntryScope, EntryStatus, RejectedFor
from workspace_memory.store import keys
from workspace_memory.store.changes import Change, MoveEntryHead, Put
from workspace_memory.store.entry_records import CandidateRecord
from workspace_memory.turns.admission import AdmissionRef
from workspace_memory.workspaces.access import load_caller

pytestmark = pytest.mark.unit

TURN, LATER = (AdmissionRef(f"conv-{n}", "ws", EDITOR, None).encode(f"adm_{n:024x}") for n in (10, 11))
"""Two turns' admission ids, as the service issues them."""
SHA = "0" * 64
DOC = Source(CitationKind.DOCUMENT_VERSION, "7", SHA, "line 3")
OTHER_DOC = Source(CitationKind.DOCUMENT_VERSION, "8", SHA)


def agent_save(w: World, sources: Sequence[Source] = (), admission: str = LATER, summary: str = "deploy day") -> str:
    """An agent's save in `auto` as `save_memory` composes it: the entry writes and, in the same transaction,
    the conditions that nothing it draws on was forgotten (the turn's own fence left out: judged elsewhere)."""
    caller, _ = load_caller(w.table, w.ws, EDITOR)
    fence = w.entries.not_forgotten(w.ws, sources, admission, w.clock.now())
    author = Author(EDITOR, "agent", admission, rated=True)
    return w.entries.create_fenced(caller, draft(summary=summary, sources=tuple(sources)), author, fence).entry_id


def forgotten_chain(w: World, sources: Sequence[Source] = (DOC,), admission: str | None = None) -> str:
    """A chain citing `sources` (an agent's from `admission`, else a person's), forgotten by the owner."""
    if admission is None:
        entry_id = w.entries.create(OWNER, w.ws, draft(sources=tuple(sources))).entry_id
    else:
        entry_id = agent_save(w, sources, admission)
    w.entries.forget(OWNER, w.ws, entry_id)
    return entry_id


def blocks(w: World) -> dict[keys.Key, dict[str, object]]:
    return {key: item for key, item in w.table.items.items() if key[1].startswith(keys.FORGOTTEN_SOURCE_PREFIX)}


def test_an_agent_save_citing_a_forgotten_source_is_refused_and_writes_nothing() -> None:
    w = make()
    forgotten_chain(w)
    before = snapshot(w)
    with pytest.raises(SourceForgotten) as refused:
        agent_save(w, [DOC])
    assert refused.value.code == "SOURCE_FORGOTTEN"
    assert snapshot(w) == before
    assert agent_save(w, [OTHER_DOC])  # a source no forget drew on still saves


def test_a_persons_save_citing_a_forgotten_source_is_not_blocked() -> None:
    w = make()
    forgotten_chain(w)
    written = w.entries.create(EDITOR, w.ws, draft(sources=(DOC,)))
    assert w.entries.read(EDITOR, w.ws, written.entry_id).status is EntryStatus.ACTIVE


def test_the_turn_that_wrote_a_forgotten_chain_saves_nothing_more() -> None:
    w = make()
    forgotten_chain(w, sources=(), admission=TURN)
    before = snapshot(w)
    with pytest.raises(SourceForgotten):
        agent_save(w, [], admission=TURN)
    assert snapshot(w) == before
    assert agent_save(w, [], admission=LATER)  # another turn is not blocked


def test_a_read_only_candidate_citing_a_forgotten_source_is_refused_too() -> None:
    w = make()
    forgotten_chain(w)
    before = snapshot(w)
    with pytest.raises(SourceForgotten):
        w.entries.propose(
            EDITOR,
            w.ws,
            draft(sources=(DOC,)),
            admission_id=LATER,
            fence=w.entries.not_forgotten(w.ws, [DOC], LATER, w.clock.now()),
        )
    assert snapshot(w) == before


def test_the_block_holds_for_the_history_window_then_ends() -> None:
    w = make()
    entry_id = forgotten_chain(w)
    ((_, block),) = blocks(w).items()
    assert block["ttl"] == int(w.clock.now()) + 90 * DAY_SECONDS  # the workspace's historyDays (absent = 90)
    assert block["entryId"] == entry_id
    w.clock.advance(90 * DAY_SECONDS - 1)
    with pytest.raises(SourceForgotten):
        agent_save(w, [DOC])
    w.clock.advance(1)  # TTL has not deleted it yet: the condition judges the window itself
    assert agent_save(w, [DOC])


def test_blocks_name_hashes_and_the_tombstone_counts_them() -> None:
    w = make()
    entry_id = agent_save(w, [DOC, OTHER_DOC, DOC], admission=TURN)
    w.entries.forget(OWNER, w.ws, entry_id)
    assert len(blocks(w)) == 3  # two sources and the turn, once each
    stored = repr(blocks(w)) + repr(w.table.items[keys.entry(w.ws, entry_id)])
    assert "document-version" not in stored
    assert TURN not in stored
    tombstone = w.table.items[keys.entry(w.ws, entry_id)]
    assert tombstone["blockedSources"] == 3
    assert "sourceSlots" not in tombstone


def test_an_agent_save_racing_the_forget_is_refused_by_its_own_transaction() -> None:
    """The forget lands between the agent's judgement (its conditions computed, nothing blocked yet) and its
    transaction: the transaction's own condition refuses it."""
    w = make()
    entry_id = w.entries.create(OWNER, w.ws, draft(sources=(DOC,))).entry_id
    fired: list[bool] = []

    def forget_first(table: MemoryTable) -> None:
        if not fired:
            fired.append(True)
            table.before_transact = None
            w.entries.forget(OWNER, w.ws, entry_id)

    caller, _ = load_caller(w.table, w.ws, EDITOR)
    fence = w.entries.not_forgotten(w.ws, [DOC], LATER, w.clock.now())
    w.table.before_transact = forget_first
    with pytest.raises(SourceForgotten):
        w.entries.create_fenced(caller, draft(sources=(DOC,)), Author(EDITOR, "agent", LATER, rated=True), fence)
    assert fired
    assert [k for k in w.table.items if k[1].startswith(keys.ENTRY_PREFIX)] == [keys.entry(w.ws, entry_id)]


def test_pending_candidates_of_the_forgotten_chain_lose_their_text() -> None:
    w = make()
    entry_id = w.entries.create(OWNER, w.ws, draft()).entry_id
    save = w.entries.propose(EDITOR, w.ws, draft(summary="Tuesdays"), entry_id=entry_id, base_revision=1)
    caller, _ = load_caller(w.table, w.ws, EDITOR)
    forget = w.entries.propose_forget(caller, entry_id, TURN, [], member_check=True)
    kept = w.entries.propose(EDITOR, w.ws, draft(title="Other"))  # another chain's: left pending
    w.entries.forget(OWNER, w.ws, entry_id)
    for candidate_id in (save, forget):
        item = w.table.items[keys.entry_candidate(w.ws, candidate_id)]
        assert "ciphertext" not in item
        record = CandidateRecord.from_item(item)
        assert (record.status, record.rejected_for, record.decided_by) == (
            CandidateStatus.REJECTED,
            RejectedFor.ENTRY_FORGOTTEN,
            OWNER,
        )
        with pytest.raises(StaleRevision):  # decided: accepting it later resurrects nothing
            w.entries.accept(OWNER, w.ws, candidate_id, 1)
    assert "ciphertext" in w.table.items[keys.entry_candidate(w.ws, kept)]
    views, _ = w.entries.candidates(OWNER, w.ws, 10, None)
    assert [v.candidate_id for v in views] == [kept]


def test_a_save_candidate_of_the_turn_that_wrote_the_chain_is_closed_with_it() -> None:
    w = make()
    entry_id = agent_save(w, [], admission=TURN)
    same_turn = w.entries.propose(EDITOR, w.ws, draft(title="Again"), admission_id=TURN)
    w.entries.forget(OWNER, w.ws, entry_id)
    assert "ciphertext" not in w.table.items[keys.entry_candidate(w.ws, same_turn)]


def test_the_bulk_forget_blocks_and_closes_as_one_forget_does() -> None:
    w = make()
    entry_id = w.entries.create(EDITOR, w.ws, draft(scope=EntryScope.MEMBER, sources=(DOC,))).entry_id
    pending = w.entries.propose(EDITOR, w.ws, draft(summary="Tuesdays"), entry_id=entry_id, base_revision=1)
    assert w.entries.forget_member(OWNER, w.ws, EDITOR) == 1
    assert len(blocks(w)) == 1
    assert "ciphertext" not in w.table.items[keys.entry_candidate(w.ws, pending)]
    with pytest.raises(SourceForgotten):
        agent_save(w, [DOC])


def test_a_long_chain_blocks_every_revisions_sources_within_transaction_bounds() -> None:
    """Each transaction that deletes revisions blocks what they cited, the first (the tombstone's) what the
    current revision cited; none is over DynamoDB's 100 actions."""
    w = make()
    many = [Source(CitationKind.DOCUMENT_VERSION, str(n), SHA) for n in range(1, 121)]
    entry_id = w.entries.create(OWNER, w.ws, draft(sources=tuple(many[:20]))).entry_id
    for revision in range(1, 6):
        cited = tuple(many[20 * revision : 20 * revision + 20])
        w.entries.supersede(OWNER, w.ws, entry_id, draft(summary=f"r{revision + 1}", sources=cited), revision)
    current = set(w.table.items[keys.entry(w.ws, entry_id)]["sourceSlots"])
    landed: list[Sequence[Change]] = []
    transact = w.table.transact

    def counted(changes: Sequence[Change]) -> None:
        transact(changes)
        landed.append(changes)

    w.table.transact = counted  # type: ignore[method-assign]
    w.entries.forget(OWNER, w.ws, entry_id)
    assert len(blocks(w)) == 120
    assert not [k for k in w.table.items if k[1].startswith(keys.entry_revisions_prefix(entry_id))]
    forgets = [t for t in landed if any(isinstance(c, Put) and c.key[1].startswith("ENTRYBLOCK#") for c in t)]
    assert len(forgets) == 2
    assert max(len(t) for t in forgets) <= 100 - 1
    (tombstone,) = [t for t in forgets if any(isinstance(c, MoveEntryHead) for c in t)]
    in_first = {c.key[1].removeprefix(keys.FORGOTTEN_SOURCE_PREFIX) for c in tombstone if isinstance(c, Put)}
    assert current <= in_first
