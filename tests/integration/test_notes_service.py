"""Working notes against the moto server with real KMS envelope encryption and real threads."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support import item_bytes
from workspace_memory import keys
from workspace_memory.adapters.kms_cipher import KmsCipher
from workspace_memory.bootstrap import Services
from workspace_memory.errors import DecryptionFailed
from workspace_memory.notes import NOTES_MAX_BYTES, Notes, NotesConflict, NotesService, NotesTooLarge

pytestmark = pytest.mark.integration

WRITERS = 8


def new_session() -> str:
    return f"sess-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def notes(svc: Services) -> NotesService:
    return NotesService(svc.table, svc.cipher, svc.clock)


def test_a_new_session_has_empty_notes_at_revision_zero(notes: NotesService) -> None:
    assert notes.get(new_session()) == Notes("", 0, 0, None)


def test_round_trip_and_revisions_increment(notes: NotesService) -> None:
    sid = new_session()
    first = notes.update(sid, "# plan\n- step one ✓")
    assert (first.revision, first.bytes) == (1, len("# plan\n- step one ✓".encode()))
    assert notes.get(sid) == first
    second = notes.put(sid, "- step two", 1)
    assert second.revision == 2
    assert notes.get(sid).text == "- step two"
    cleared = notes.clear(sid)
    assert (cleared.revision, cleared.text) == (3, "")
    assert notes.get(sid) == cleared


def test_a_stale_expected_revision_conflicts_and_leaves_the_text(notes: NotesService) -> None:
    sid = new_session()
    notes.put(sid, "v1", 0)
    notes.put(sid, "v2", 1)
    with pytest.raises(NotesConflict) as info:
        notes.put(sid, "stale", 1)
    assert info.value.current_revision == 2
    with pytest.raises(NotesConflict):
        notes.put(sid, "create again", 0)
    assert (notes.get(sid).text, notes.get(sid).revision) == ("v2", 2)


def test_over_the_cap_is_refused_and_the_notes_are_unchanged(notes: NotesService) -> None:
    sid = new_session()
    notes.update(sid, "a" * NOTES_MAX_BYTES)
    with pytest.raises(NotesTooLarge):
        notes.update(sid, "b" * (NOTES_MAX_BYTES + 1))
    current = notes.get(sid)
    assert (current.revision, current.bytes, current.text[:1]) == (1, NOTES_MAX_BYTES, "a")


def test_the_stored_item_holds_no_plaintext(notes: NotesService, svc: Services) -> None:
    sid = new_session()
    marker = f"MARKER-{uuid.uuid4().hex}"
    notes.update(sid, f"remember {marker} for later", workspace_id="ws-notes")
    item = svc.table.get(*keys.notes(sid))
    assert item is not None
    assert marker.encode() not in item_bytes(item)
    assert item["revision"] == 1
    assert item["workspaceId"] == "ws-notes"
    assert item["ttl"] > svc.clock.now()
    assert isinstance(item["ciphertext"], bytes)


def test_ciphertext_moved_to_another_session_fails_to_decrypt(notes: NotesService, svc: Services) -> None:
    source, target = new_session(), new_session()
    notes.update(source, "secret of the source session")
    notes.update(target, "the target's own notes")
    stolen = svc.table.get(*keys.notes(source))
    assert stolen is not None
    svc.table.put({**stolen, **keys.as_key(keys.notes(target))})  # same revision: only the session differs
    with pytest.raises(DecryptionFailed):
        notes.get(target)
    with pytest.raises(DecryptionFailed):  # a cold cipher (no cache) checks the context the same way
        NotesService(svc.table, KmsCipher(svc.clients.kms, svc.settings.kms_key_id), svc.clock).get(target)


def test_concurrent_updates_lose_no_revision(notes: NotesService) -> None:
    sid = new_session()
    barrier = threading.Barrier(WRITERS)

    def write(i: int) -> Notes | NotesConflict:
        barrier.wait()
        try:
            return notes.update(sid, f"writer {i}")
        except NotesConflict as exc:
            return exc

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        outcomes = list(pool.map(write, range(WRITERS)))

    wins = [o for o in outcomes if isinstance(o, Notes)]
    assert wins
    assert sorted(w.revision for w in wins) == list(range(1, len(wins) + 1))
    final = notes.get(sid)
    assert final.revision == len(wins)
    assert final.text == max(wins, key=lambda w: w.revision).text
