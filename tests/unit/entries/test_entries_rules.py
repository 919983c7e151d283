"""Memory entries over the in-memory table: scopes and visibility, supersession, keys, forget, caps, the agent
write rate, candidates, citations and bad input (docs/architecture.md#entries)."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass

import pytest

from tests.memory_table import MemoryKeyStore, MemoryTable
from tests.unit.fakes import FakeCipher
from workspace_memory.document.service import DocumentService
from workspace_memory.entries.index import INDEX_HEADING, INDEX_MAX_BYTES, IndexLines, build_index
from workspace_memory.entries.model import Draft, EntryText, Filters, Source
from workspace_memory.entries.service import EntryService
from workspace_memory.governance.redaction import PersonalDataInKey
from workspace_memory.kernel.clock import ManualClock
from workspace_memory.kernel.errors import (
    CandidateNotFound,
    EntryCap,
    EntryForgotten,
    EntryNotFound,
    Forbidden,
    InvalidEntryKey,
    InvalidInput,
    PayloadTooLarge,
    RateLimited,
    StaleRevision,
    WorkspaceNotFound,
)
from workspace_memory.kernel.terms import CitationKind, CitationState, EntryScope, EntryStatus, EntryType
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.workspaces.access import AccessService, Role, ShareType

pytestmark = pytest.mark.unit

OWNER, EDITOR, VIEWER, OTHER = "olivia", "eddie", "vera", "oscar"


@dataclass
class World:
    table: MemoryTable
    cipher: FakeCipher
    clock: ManualClock
    entries: EntryService
    documents: DocumentService
    ws: str


def make(cap: int = 5000, rate: int = 120) -> World:
    table, store, clock = MemoryTable(), MemoryKeyStore(), ManualClock()
    cipher = FakeCipher(store)
    access = AccessService(table, clock, store, cipher)
    ws = access.create_workspace(OWNER, "w", ShareType.SHARED)
    access.put_member(OWNER, ws, EDITOR, Role.EDITOR)
    access.put_member(OWNER, ws, VIEWER, Role.VIEWER)
    entries = EntryService(table, cipher, clock, version_cap=cap, agent_writes_per_hour=rate)
    return World(table, cipher, clock, entries, DocumentService(table, cipher, clock), ws)


def draft(
    title: str = "Deploys",
    *,
    scope: EntryScope = EntryScope.WORKSPACE,
    key: str | None = None,
    body: str = "We deploy on Fridays.",
    summary: str = "deploy day",
    sources: tuple[Source, ...] = (),
    reason: str | None = None,
) -> Draft:
    return Draft(EntryType.FACT, EntryText(title, summary, body, sources, key), scope, reason=reason)


def snapshot(world: World) -> dict[keys.Key, Item]:
    return copy.deepcopy(world.table.items)


def test_create_read_and_list() -> None:
    w = make()
    written = w.entries.create(EDITOR, w.ws, draft(key="ops/deploy-day"))
    assert written.revision == 1
    view = w.entries.read(VIEWER, w.ws, written.entry_id)
    assert (view.text.title, view.text.key, view.status, view.author) == (
        "Deploys",
        "ops/deploy-day",
        EntryStatus.ACTIVE,
        EDITOR,
    )
    page = w.entries.list_entries(VIEWER, w.ws, Filters(), 20, None)
    assert [r.entry_id for r in page.rows] == [written.entry_id]
    assert (
        w.entries.list_entries(VIEWER, w.ws, Filters(key="ops/deploy-day"), 20, None).rows[0].entry_id
        == written.entry_id
    )
    assert w.entries.list_entries(VIEWER, w.ws, Filters(key="ops/other"), 20, None).rows == []


def test_no_plaintext_key_or_text_in_the_table() -> None:
    w = make()
    w.entries.create(EDITOR, w.ws, draft(key="ops/zebra-key", title="Zebra title", body="zebra body"))
    raw = repr(w.table.items)
    for text in ("zebra-key", "Zebra title", "zebra body"):
        assert text not in raw


def test_member_entries_are_their_members_alone() -> None:
    w = make()
    mine = w.entries.create(VIEWER, w.ws, draft("Private", scope=EntryScope.MEMBER))
    for user in (OWNER, EDITOR):
        assert w.entries.list_entries(user, w.ws, Filters(), 100, None).rows == []
        with pytest.raises(EntryNotFound):
            w.entries.read(user, w.ws, mine.entry_id)
        with pytest.raises(EntryNotFound):
            w.entries.history(user, w.ws, mine.entry_id, 10, None)
        with pytest.raises(EntryNotFound):
            w.entries.supersede(user, w.ws, mine.entry_id, draft("x"), 1)
        with pytest.raises(EntryNotFound):
            w.entries.forget(user, w.ws, mine.entry_id)
    assert w.entries.read(VIEWER, w.ws, mine.entry_id).text.title == "Private"


def test_write_right_per_scope() -> None:
    w = make()
    with pytest.raises(Forbidden):
        w.entries.create(VIEWER, w.ws, draft())
    with pytest.raises(WorkspaceNotFound):
        w.entries.create(OTHER, w.ws, draft())
    with pytest.raises(WorkspaceNotFound):
        w.entries.list_entries(OTHER, w.ws, Filters(), 10, None)


def test_supersede_moves_from_exactly_the_base() -> None:
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft())
    w.clock.advance(10)
    second = w.entries.supersede(OWNER, w.ws, first.entry_id, draft("Deploys v2", reason="moved"), 1)
    assert second.revision == 2
    before = snapshot(w)
    with pytest.raises(StaleRevision) as stale:
        w.entries.supersede(OWNER, w.ws, first.entry_id, draft("late"), 1)
    assert stale.value.details["current_revision"] == 2
    assert snapshot(w) == before
    rows = w.entries.history(VIEWER, w.ws, first.entry_id, 10, None).rows
    assert [(r.revision, r.status) for r in rows] == [(2, EntryStatus.ACTIVE), (1, EntryStatus.SUPERSEDED)]
    assert rows[1].superseded_reason == "moved"
    old = w.table.items[keys.entry_revision(w.ws, first.entry_id, 1)]
    assert old["ttl"] == int(w.clock.now()) + 90 * 86400
    assert "supersededReason" not in old  # sealed in revision 2's text (decisions/0055)
    assert w.entries.read(VIEWER, w.ws, first.entry_id, as_of=w.clock.now() - 5).superseded_reason == "moved"


def test_as_of_answers_the_revision_valid_then() -> None:
    w = make()
    t0 = w.clock.now()
    first = w.entries.create(EDITOR, w.ws, draft("one"))
    w.clock.advance(100)
    w.entries.supersede(EDITOR, w.ws, first.entry_id, draft("two"), 1)
    assert w.entries.read(VIEWER, w.ws, first.entry_id, as_of=t0 + 50).text.title == "one"
    assert w.entries.read(VIEWER, w.ws, first.entry_id, as_of=t0 + 100).text.title == "two"
    with pytest.raises(EntryNotFound):
        w.entries.read(VIEWER, w.ws, first.entry_id, as_of=t0 - 1)
    rows = w.entries.list_entries(VIEWER, w.ws, Filters(as_of=t0 + 50), 10, None).rows
    assert [(r.title, r.revision) for r in rows] == [("one", 1)]


def test_as_of_tells_apart_revisions_of_the_same_second() -> None:
    """Validity is compared to the millisecond: a supersession 200 ms after the create does not hide revision 1
    from an `asOf` between the two."""
    w = make()
    t0 = w.clock.now()
    first = w.entries.create(EDITOR, w.ws, draft("one"))
    w.clock.advance(0.2)
    w.entries.supersede(EDITOR, w.ws, first.entry_id, draft("two"), 1)
    assert w.entries.read(VIEWER, w.ws, first.entry_id, as_of=t0 + 0.1).text.title == "one"
    assert w.entries.read(VIEWER, w.ws, first.entry_id, as_of=t0 + 0.2).text.title == "two"


def test_an_existing_key_is_superseded_not_duplicated() -> None:
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft("one", key="ops/day"))
    again = w.entries.create(OWNER, w.ws, draft("two", key="ops/day"))
    assert (again.entry_id, again.revision, again.superseded) == (first.entry_id, 2, True)
    # the same key in another scope is another slot
    private = w.entries.create(VIEWER, w.ws, draft("mine", key="ops/day", scope=EntryScope.MEMBER))
    assert private.entry_id != first.entry_id
    assert not private.superseded


def test_forget_removes_every_version_and_frees_the_key() -> None:
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft("one", key="ops/day"))
    for n in range(3):
        w.entries.supersede(EDITOR, w.ws, first.entry_id, draft(f"v{n}"), n + 1)
    w.entries.forget(EDITOR, w.ws, first.entry_id)
    left = [k for k in w.table.items if first.entry_id in k[1] or k[1].startswith("ENTRYKEY#")]
    assert left == [keys.entry(w.ws, first.entry_id)]
    tomb = w.table.items[keys.entry(w.ws, first.entry_id)]
    assert tomb["status"] == "forgotten"
    assert "ciphertext" not in tomb
    assert "keySlot" not in tomb
    assert w.table.items[keys.entry_counter(w.ws)]["versions"] == 0
    with pytest.raises(EntryForgotten):
        w.entries.read(VIEWER, w.ws, first.entry_id)
    w.entries.forget(EDITOR, w.ws, first.entry_id)  # idempotent
    fresh = w.entries.create(EDITOR, w.ws, draft("new", key="ops/day"))
    assert fresh.entry_id != first.entry_id
    assert not fresh.superseded


def test_owner_forgets_a_members_entries_without_reading_them() -> None:
    w = make()
    w.entries.create(VIEWER, w.ws, draft("a", scope=EntryScope.MEMBER))
    w.entries.create(VIEWER, w.ws, draft("b", scope=EntryScope.MEMBER))
    kept = w.entries.create(EDITOR, w.ws, draft("c", scope=EntryScope.MEMBER))
    decrypts = w.cipher.decrypts
    with pytest.raises(Forbidden):
        w.entries.forget_member(EDITOR, w.ws, VIEWER)
    assert w.entries.forget_member(OWNER, w.ws, VIEWER) == 2
    assert w.cipher.decrypts == decrypts
    assert w.entries.list_entries(VIEWER, w.ws, Filters(), 10, None).rows == []
    assert [r.entry_id for r in w.entries.list_entries(EDITOR, w.ws, Filters(), 10, None).rows] == [kept.entry_id]


def test_version_cap() -> None:
    w = make(cap=3)
    first = w.entries.create(EDITOR, w.ws, draft())
    w.entries.supersede(EDITOR, w.ws, first.entry_id, draft("2"), 1)
    w.entries.create(EDITOR, w.ws, draft("other"))
    before = snapshot(w)
    with pytest.raises(EntryCap):
        w.entries.create(EDITOR, w.ws, draft("over"))
    with pytest.raises(EntryCap):
        w.entries.supersede(EDITOR, w.ws, first.entry_id, draft("3"), 2)
    assert snapshot(w) == before
    w.entries.forget(EDITOR, w.ws, first.entry_id)  # two versions freed
    w.entries.create(EDITOR, w.ws, draft("fits again"))


def test_the_version_cap_of_private_entries_is_each_members_own() -> None:
    """Another member's private versions never move where a member's own writes are refused (decision 0056):
    the editor fills the cap with private versions; the owner still has all of it, privately and shared."""
    w = make(cap=2)
    mine = w.entries.create(EDITOR, w.ws, draft("mine", scope=EntryScope.MEMBER))
    w.entries.supersede(EDITOR, w.ws, mine.entry_id, draft("mine 2"), 1)
    before = snapshot(w)
    with pytest.raises(EntryCap):
        w.entries.create(EDITOR, w.ws, draft("over", scope=EntryScope.MEMBER))
    assert snapshot(w) == before
    for n in range(2):
        w.entries.create(OWNER, w.ws, draft(f"owner's {n}", scope=EntryScope.MEMBER))
        w.entries.create(EDITOR, w.ws, draft(f"shared {n}"))
    with pytest.raises(EntryCap):
        w.entries.create(OWNER, w.ws, draft("owner's over", scope=EntryScope.MEMBER))
    w.entries.forget(EDITOR, w.ws, mine.entry_id)  # the editor's two private versions freed, nobody else's
    w.entries.create(EDITOR, w.ws, draft("fits again", scope=EntryScope.MEMBER))
    with pytest.raises(EntryCap):
        w.entries.create(OWNER, w.ws, draft("still over", scope=EntryScope.MEMBER))


def test_agent_write_rate() -> None:
    w = make(rate=3)
    for _ in range(3):
        w.entries.propose(EDITOR, w.ws, draft())
    with pytest.raises(RateLimited) as limited:
        w.entries.propose(EDITOR, w.ws, draft())
    assert limited.value.details["retry_after"] == 3600  # the three writes' hour (test_agent_write_window.py)
    w.entries.propose(OWNER, w.ws, draft())  # another user has their own budget
    w.clock.advance(limited.value.details["retry_after"])
    w.entries.propose(EDITOR, w.ws, draft())
    w.entries.create(EDITOR, w.ws, draft())  # human writes are not counted


def test_candidates_accept_and_reject() -> None:
    w = make()
    cid = w.entries.propose(EDITOR, w.ws, draft("from agent", body="mail me at a@example.com"))
    listed, _ = w.entries.candidates(OWNER, w.ws, 10, None)
    assert [(c.candidate_id, c.title) for c in listed] == [(cid, "from agent")]
    assert w.entries.candidates(VIEWER, w.ws, 10, None)[0] == []  # no write right, nothing to decide
    with pytest.raises(StaleRevision):
        w.entries.accept(OWNER, w.ws, cid, 2)
    written = w.entries.accept(OWNER, w.ws, cid, 1)
    view = w.entries.read(VIEWER, w.ws, written.entry_id)
    assert view.text.body == "mail me at [redacted:email]"
    assert view.author_kind == "agent"
    with pytest.raises(StaleRevision):
        w.entries.accept(OWNER, w.ws, cid, 1)
    assert "ciphertext" not in w.table.items[keys.entry_candidate(w.ws, cid)]
    other = w.entries.propose(EDITOR, w.ws, draft("no"))
    w.entries.reject(OWNER, w.ws, other, 1)
    assert w.entries.candidates(OWNER, w.ws, 10, None)[0] == []
    with pytest.raises(CandidateNotFound):
        w.entries.reject(OWNER, w.ws, "ec_missing", 1)


def test_a_candidate_can_supersede_a_chain() -> None:
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft("one"))
    cid = w.entries.propose(EDITOR, w.ws, draft("two"), entry_id=first.entry_id, base_revision=1)
    assert w.entries.accept(OWNER, w.ws, cid, 1).revision == 2
    stale = w.entries.propose(EDITOR, w.ws, draft("three"), entry_id=first.entry_id, base_revision=1)
    with pytest.raises(StaleRevision):
        w.entries.accept(OWNER, w.ws, stale, 1)
    assert w.table.items[keys.entry_candidate(w.ws, stale)]["status"] == "pending"


def test_citations_are_rechecked_live() -> None:
    w = make()
    body = "We deploy on Fridays."
    cited = w.entries.create(EDITOR, w.ws, draft(body=body))
    private = w.entries.create(VIEWER, w.ws, draft("p", scope=EntryScope.MEMBER, body="secret"))
    doc = w.documents.save(OWNER, w.ws, "# doc\n", 0)

    def sha(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    sources = (
        Source(CitationKind.ENTRY, cited.entry_id, sha(body)),
        Source(CitationKind.DOCUMENT_VERSION, str(doc.version.version), sha("# doc\n"), "line 1"),
        Source(CitationKind.ENTRY, private.entry_id, sha("secret")),
        Source(CitationKind.DOCUMENT_VERSION, "99", sha("x")),
    )
    citing = w.entries.create(EDITOR, w.ws, draft("citing", sources=sources))
    states = [c.state for c in w.entries.read(EDITOR, w.ws, citing.entry_id).citations]
    assert states == [CitationState.OK, CitationState.OK, CitationState.HIDDEN, CitationState.HIDDEN]
    w.entries.supersede(EDITOR, w.ws, cited.entry_id, draft(body="We deploy on Mondays."), 1)
    assert w.entries.read(EDITOR, w.ws, citing.entry_id).citations[0].state is CitationState.CHANGED
    w.entries.forget(EDITOR, w.ws, cited.entry_id)
    assert w.entries.read(EDITOR, w.ws, citing.entry_id).citations[0].state is CitationState.HIDDEN


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (draft(key="Not A Key"), InvalidEntryKey),
        (draft(key="ops"), InvalidEntryKey),
        (draft(key="people/jane.doe@example.com"), InvalidEntryKey),
        (draft("x" * 121), PayloadTooLarge),
        (draft(summary="two\nlines"), InvalidInput),
        (draft(body="b" * 4097), PayloadTooLarge),
        (draft(""), InvalidInput),
        (draft(sources=(Source(CitationKind.ENTRY, "en_x", "nothex"),)), InvalidInput),
    ],
)
def test_bad_input_changes_nothing(bad: Draft, error: type[Exception]) -> None:
    w = make()
    before = snapshot(w)
    with pytest.raises(error):
        w.entries.create(EDITOR, w.ws, bad)
    assert snapshot(w) == before


def test_a_key_with_personal_data_is_refused() -> None:
    w = make()
    with pytest.raises(PersonalDataInKey):
        w.entries.create(EDITOR, w.ws, draft(key="people/4111111111111111"))


def test_the_index_is_bounded_and_says_what_it_left_out() -> None:
    w = make()
    ids = [w.entries.create(EDITOR, w.ws, draft(f"Entry {n:03d}", summary=f"line {n}")).entry_id for n in range(105)]
    w.entries.create(VIEWER, w.ws, draft("Private of vera", scope=EntryScope.MEMBER))
    w.entries.forget(EDITOR, w.ws, ids[0])
    index = build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now())
    lines = index.text.splitlines()
    assert lines[0] == INDEX_HEADING
    assert len(lines) == 1 + 100 + 1
    assert lines[-1] == "4 more not shown; search_memory finds them."
    assert len(index.recalled) == 100
    assert "Private of vera" not in index.text
    assert ids[0] not in index.text
    assert len(index.text.encode()) <= INDEX_MAX_BYTES
    assert [line.rsplit("[", 1)[1].rstrip("]") for line in lines[1:-1]] == [e for e, _ in index.recalled]
    # Ids are random, so which 100 of the viewer's 105 lines fit is chance: give the viewer room for all.
    viewer = build_index(w.table, w.cipher, w.ws, VIEWER, now=w.clock.now(), max_lines=200)
    assert any("Private of vera" in line for line in viewer.text.splitlines())
    assert len(viewer.recalled) == 105


def test_the_index_byte_budget_cuts_before_the_line_count() -> None:
    w = make()
    for n in range(60):
        w.entries.create(EDITOR, w.ws, draft("T" * 118 + f"{n:02d}", summary="s" * 199))
    index = build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now())
    assert len(index.text.encode()) <= INDEX_MAX_BYTES
    shown = len(index.recalled)
    assert shown < 60
    assert index.text.splitlines()[-1] == f"{60 - shown} more not shown; search_memory finds them."


def test_an_empty_index_is_nothing() -> None:
    w = make()
    assert build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now()).text == ""


def test_reads_are_counted_off_the_critical_path_and_survive_supersession() -> None:
    w = make()
    written = w.entries.create(EDITOR, w.ws, draft())
    for _ in range(3):
        w.entries.read(VIEWER, w.ws, written.entry_id)
    w.entries.flush_read_counts()
    head = w.table.items[keys.entry(w.ws, written.entry_id)]
    assert (head["readCount"], head["lastReadAt"]) == (3, "2027-01-15T08:00:00.000Z")
    w.entries.supersede(EDITOR, w.ws, written.entry_id, draft("v2"), 1)
    assert w.table.items[keys.entry(w.ws, written.entry_id)]["readCount"] == 3
    assert "readCount" not in w.table.items[keys.entry_revision(w.ws, written.entry_id, 2)]


def test_a_warm_index_decrypts_only_new_revisions() -> None:
    w = make()
    ids = [w.entries.create(EDITOR, w.ws, draft(f"E{n}")).entry_id for n in range(5)]
    cache = IndexLines()
    first = build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now(), cache=cache)
    decrypts = w.cipher.decrypts
    assert build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now(), cache=cache) == first
    assert w.cipher.decrypts == decrypts
    w.entries.supersede(EDITOR, w.ws, ids[0], draft("E0 renamed"), 1)
    decrypts = w.cipher.decrypts
    again = build_index(w.table, w.cipher, w.ws, EDITOR, now=w.clock.now(), cache=cache)
    assert w.cipher.decrypts == decrypts + 1
    assert "E0 renamed" in again.text
    assert (ids[0], 2) in again.recalled
