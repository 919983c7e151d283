"""Unit tests for the working-notes rules, over in-memory fakes of the table and cipher (no sockets)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest

from tests.memory_table import MemoryTable
from tests.unit.fakes import FakeCipher
from workspace_memory.kernel.clock import ManualClock, iso
from workspace_memory.kernel.errors import DecryptionFailed, InvalidInput, PayloadTooLarge
from workspace_memory.store import keys
from workspace_memory.store.changes import Change
from workspace_memory.store.ports import Item
from workspace_memory.turns.notes import (
    NOTES_MAX_BYTES,
    NOTES_TTL_SECONDS,
    Notebook,
    Notes,
    NotesConflict,
    NotesService,
    NotesTooLarge,
)

pytestmark = pytest.mark.unit

SID = "sess-1"
BOOK = Notebook("ws-1", "alice", SID)


def book_key(book: Notebook) -> keys.Key:
    return keys.notes(book.workspace_id, book.user_id, book.session_id)


class FakeTable(MemoryTable):
    """The in-memory table, counting write attempts; notes write through transactions only.

    `interfere`, when set, runs before each write is judged: it stands for another writer landing first.
    """

    def __init__(self) -> None:
        super().__init__()
        for ws in {"ws-1", "ws-2"}:  # a live workspace: a notes write checks it (decision 0056)
            self.items[keys.meta(ws)] = {**keys.as_key(keys.meta(ws))}
        self.seeded = dict(self.items)
        self.attempts = 0
        self.interfere: Callable[[FakeTable], None] | None = None

    def get_many(self, keys: Sequence[tuple[str, str]]) -> list[Item | None]:
        raise AssertionError("not read by these tests")

    def put(self, item: Item) -> None:
        raise AssertionError("notes write through transactions only")

    def transact(self, changes: Sequence[Change]) -> None:
        self.attempts += 1
        if self.interfere is not None:
            self.interfere(self)
        super().transact(changes)

    def bump(self, book: Notebook) -> None:
        """Another writer's commit: the revision moves on under us."""
        key = book_key(book)
        current = self.items.get(key)
        revision = 0 if current is None else int(current["revision"])
        self.items[key] = {**(current or keys.as_key(key)), "revision": revision + 1}


@pytest.fixture
def table() -> FakeTable:
    return FakeTable()


@pytest.fixture
def cipher() -> FakeCipher:
    return FakeCipher()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def notes(table: FakeTable, cipher: FakeCipher, clock: ManualClock) -> NotesService:
    return NotesService(table, cipher, clock)


# --- reads and the item shape --------------------------------------------------------------------


def test_a_new_session_has_empty_notes_at_revision_zero(notes: NotesService) -> None:
    assert notes.get(Notebook("ws-1", "alice", "never-written")) == Notes("", 0, 0, None)
    assert notes.get(Notebook("ws-1", "alice", "never-written")).empty


def test_round_trip_stores_only_ciphertext_bound_to_session_and_revision(
    notes: NotesService, table: FakeTable, cipher: FakeCipher, clock: ManualClock
) -> None:
    written = notes.put(BOOK, "plan: step one", 0)
    assert written == Notes("plan: step one", 1, 14, iso(clock.now()))
    assert notes.get(BOOK) == written
    assert cipher.contexts == [{"workspace": "ws-1", "kind": "notes", "user": "alice", "session": SID, "revision": "1"}]
    item = table.items[book_key(BOOK)]
    assert set(item) == {"pk", "sk", "ciphertext", "sha256", "bytes", "revision", "updatedAt", "ttl", "workspaceId"}
    assert (item["pk"], item["sk"]) == ("WS#ws-1", "NOTES#alice#sess-1")
    assert item["revision"] == 1
    assert item["bytes"] == 14
    assert item["workspaceId"] == "ws-1"
    assert item["ttl"] == int(clock.now()) + NOTES_TTL_SECONDS
    assert b"plan: step one" not in item["ciphertext"]


def test_each_write_advances_the_revision_and_refreshes_the_ttl(
    notes: NotesService, table: FakeTable, clock: ManualClock
) -> None:
    assert notes.update(BOOK, "one").revision == 1
    clock.advance(10 * 86400)
    assert notes.update(BOOK, "two").revision == 2
    assert table.items[book_key(BOOK)]["ttl"] == int(clock.now()) + NOTES_TTL_SECONDS
    assert notes.get(BOOK).text == "two"


def test_clear_is_a_new_revision_with_empty_content(notes: NotesService) -> None:
    notes.update(BOOK, "something")
    cleared = notes.clear(BOOK)
    assert (cleared.text, cleared.revision, cleared.bytes) == ("", 2, 0)
    assert notes.get(BOOK) == cleared
    assert notes.get(BOOK).empty


def test_an_expired_item_reads_empty_but_keeps_its_revision(notes: NotesService, clock: ManualClock) -> None:
    notes.update(BOOK, "old")
    clock.advance(NOTES_TTL_SECONDS)
    assert notes.get(BOOK) == Notes("", 1, 0, None)
    assert notes.update(BOOK, "fresh").revision == 2
    assert notes.get(BOOK).text == "fresh"


@pytest.mark.parametrize(
    "other",
    [Notebook("ws-1", "alice", "b"), Notebook("ws-1", "bob", "a"), Notebook("ws-2", "alice", "a")],
    ids=["another session", "another user", "another workspace"],
)
def test_a_tampered_ciphertext_or_one_moved_between_notebooks_is_refused(
    notes: NotesService, table: FakeTable, other: Notebook
) -> None:
    mine = Notebook("ws-1", "alice", "a")
    notes.put(mine, "alpha", 0)
    notes.put(other, "bravo", 0)
    moved = table.items[book_key(mine)]
    table.items[book_key(other)] = {**moved, **keys.as_key(book_key(other))}
    with pytest.raises(DecryptionFailed):
        notes.get(other)
    table.items[book_key(mine)]["ciphertext"] += b"x"
    with pytest.raises(DecryptionFailed):
        notes.get(mine)


def test_the_same_session_id_of_another_user_is_a_separate_empty_notebook(notes: NotesService) -> None:
    notes.put(BOOK, "alice's plan", 0)
    assert notes.get(Notebook("ws-1", "mallory", SID)) == Notes("", 0, 0, None)
    assert notes.get(Notebook("ws-2", "alice", SID)) == Notes("", 0, 0, None)


# --- the cap -------------------------------------------------------------------------------------


def test_exactly_the_cap_is_accepted(notes: NotesService) -> None:
    text = "a" * NOTES_MAX_BYTES
    assert notes.update(BOOK, text).bytes == 32768
    assert notes.get(BOOK).text == text


def test_one_byte_over_the_cap_is_refused_and_the_notes_are_unchanged(notes: NotesService, table: FakeTable) -> None:
    before = notes.update(BOOK, "keep me")
    attempts = table.attempts
    writes: list[Callable[[], object]] = [
        lambda: notes.update(BOOK, "b" * (NOTES_MAX_BYTES + 1)),
        lambda: notes.put(BOOK, "b" * (NOTES_MAX_BYTES + 1), 1),
    ]
    for write in writes:
        with pytest.raises(NotesTooLarge) as info:
            write()
        assert isinstance(info.value, PayloadTooLarge)
        assert info.value.code == "NOTES_TOO_LARGE"
        assert str(info.value) == "notes are 32769 bytes; the cap is 32768"
        assert info.value.details == {"size": 32769, "limit": 32768}
    assert table.attempts == attempts, "an over-cap write must not reach the store"
    assert notes.get(BOOK) == before


@pytest.mark.parametrize(("char", "width"), [("é", 2), ("€", 3), ("😀", 4)])
def test_the_cap_counts_utf8_bytes_not_characters(notes: NotesService, char: str, width: int) -> None:
    fits = char * (NOTES_MAX_BYTES // width)
    saved = notes.update(BOOK, fits)
    assert saved.bytes == len(fits) * width <= NOTES_MAX_BYTES
    assert notes.get(BOOK).bytes == saved.bytes
    over = char * (NOTES_MAX_BYTES // width + 1)
    with pytest.raises(NotesTooLarge):
        notes.update(BOOK, over)
    assert notes.get(BOOK).text == fits


def test_text_that_is_not_encodable_is_invalid(notes: NotesService) -> None:
    with pytest.raises(InvalidInput):
        notes.update(BOOK, "lone \ud800 surrogate")


# --- session ids and revisions -------------------------------------------------------------------


@pytest.mark.parametrize(
    "session_id", ["", "a" * 129, "has space", "a/b", "SESSION#x", "ünïcode", "line\nbreak", "tab\t"]
)
def test_invalid_session_ids_are_refused_before_any_read(
    notes: NotesService, table: FakeTable, session_id: str
) -> None:
    with pytest.raises(InvalidInput):
        notes.open("adm_x.e30", "credential", session_id)  # the fake table fails any read
    assert table.items == table.seeded


def test_notes_without_an_admission_are_refused_before_any_read(notes: NotesService) -> None:
    for admission_id, credential in [(None, "c"), ("adm_x", None), ("", "")]:
        with pytest.raises(InvalidInput) as info:
            notes.open(admission_id, credential, SID)
        assert info.value.code == "ADMISSION_REQUIRED"


@pytest.mark.parametrize("session_id", ["a", "a" * 128, "Sess-1.2_3:4"])
def test_valid_session_ids_are_accepted(notes: NotesService, session_id: str) -> None:
    assert notes.update(Notebook("ws-1", "alice", session_id), "x").revision == 1


@pytest.mark.parametrize("expected", [-1, True])
def test_expected_revision_must_be_a_non_negative_int(notes: NotesService, expected: int) -> None:
    with pytest.raises(InvalidInput):
        notes.put(BOOK, "x", expected)


def test_a_stale_expected_revision_conflicts_and_changes_nothing(notes: NotesService) -> None:
    notes.put(BOOK, "first", 0)
    second = notes.put(BOOK, "second", 1)
    for stale in (0, 1, 5):
        with pytest.raises(NotesConflict) as info:
            notes.put(BOOK, "stale", stale)
        assert info.value.code == "NOTES_REVISION_CONFLICT"
        assert info.value.current_revision == 2
        assert info.value.details == {"current_revision": 2}
        assert re.fullmatch(r"expected notes revision \d+, current is 2", str(info.value))
    assert notes.get(BOOK) == second


# --- the one bounded retry -----------------------------------------------------------------------


def test_update_retries_once_after_losing_a_race(notes: NotesService, table: FakeTable) -> None:
    notes.update(BOOK, "base")
    table.attempts = 0

    def first_attempt_loses(t: FakeTable) -> None:
        if t.attempts == 1:
            t.bump(BOOK)

    table.interfere = first_attempt_loses
    saved = notes.update(BOOK, "mine")
    assert table.attempts == 2
    assert saved.revision == 3
    assert notes.get(BOOK) == saved


def test_update_gives_up_after_exactly_two_attempts(notes: NotesService, table: FakeTable) -> None:
    notes.update(BOOK, "base")
    table.attempts = 0
    table.interfere = lambda t: t.bump(BOOK)
    with pytest.raises(NotesConflict) as info:
        notes.update(BOOK, "mine")
    assert table.attempts == 2
    assert info.value.current_revision == 3


def test_update_of_a_new_session_retries_when_another_writer_creates_it_first(
    notes: NotesService, table: FakeTable
) -> None:
    table.interfere = lambda t: t.bump(BOOK) if t.attempts == 1 else None
    saved = notes.update(BOOK, "mine")
    assert (table.attempts, saved.revision) == (2, 2)
    assert notes.get(BOOK).text == "mine"
