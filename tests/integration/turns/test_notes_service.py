"""Working notes against the moto server with real KMS envelope encryption and real threads."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.integration.fence_support import make_scene
from tests.support import item_bytes
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.kernel.errors import DecryptionFailed, ScopeNotGranted
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.turns.admission import InvalidAdmission
from workspace_memory.turns.notes import (
    NOTES_MAX_BYTES,
    AdmissionRetired,
    Notebook,
    Notes,
    NotesConflict,
    NotesService,
    NotesTooLarge,
    SessionNotFound,
)
from workspace_memory.workspaces.access import Role
from workspace_memory.workspaces.keysessions import Scope

pytestmark = pytest.mark.integration

WRITERS = 8


WS = "ws-notes"
USER = "user-notes"


def new_session() -> str:
    return f"sess-{uuid.uuid4().hex[:12]}"


def new_notebook() -> Notebook:
    return Notebook(WS, USER, new_session())


def key_of(notebook: Notebook) -> tuple[str, str]:
    return keys.notes(notebook.workspace_id, notebook.user_id, notebook.session_id)


@pytest.fixture(scope="module", autouse=True)
def _branch_key(settings: Settings) -> None:
    """Notes of `WS` are encrypted under its branch key, which `create_workspace` would have made, and written
    only while its `META` stands (no notes outlive a workspace's deletion)."""
    services = build_services(settings)
    services.key_store.create_branch_key(WS)
    services.table.put({**keys.as_key(keys.meta(WS)), "workspaceId": WS})


@pytest.fixture
def notes(svc: Services) -> NotesService:
    return NotesService(svc.table, svc.cipher, svc.clock)


def test_a_new_session_has_empty_notes_at_revision_zero(notes: NotesService) -> None:
    assert notes.get(new_notebook()) == Notes("", 0, 0, None)


def test_round_trip_and_revisions_increment(notes: NotesService) -> None:
    sid = new_notebook()
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
    sid = new_notebook()
    notes.put(sid, "v1", 0)
    notes.put(sid, "v2", 1)
    with pytest.raises(NotesConflict) as info:
        notes.put(sid, "stale", 1)
    assert info.value.current_revision == 2
    with pytest.raises(NotesConflict):
        notes.put(sid, "create again", 0)
    assert (notes.get(sid).text, notes.get(sid).revision) == ("v2", 2)


def test_over_the_cap_is_refused_and_the_notes_are_unchanged(notes: NotesService) -> None:
    sid = new_notebook()
    notes.update(sid, "a" * NOTES_MAX_BYTES)
    with pytest.raises(NotesTooLarge):
        notes.update(sid, "b" * (NOTES_MAX_BYTES + 1))
    current = notes.get(sid)
    assert (current.revision, current.bytes, current.text[:1]) == (1, NOTES_MAX_BYTES, "a")


def test_the_stored_item_holds_no_plaintext(notes: NotesService, svc: Services) -> None:
    notebook = new_notebook()
    marker = f"MARKER-{uuid.uuid4().hex}"
    notes.update(notebook, f"remember {marker} for later")
    item = svc.table.get(*key_of(notebook))
    assert item is not None
    assert (item["pk"], item["sk"]) == (f"WS#{WS}", f"NOTES#{USER}#{notebook.session_id}")
    assert marker.encode() not in item_bytes(item)
    assert item["revision"] == 1
    assert item["workspaceId"] == WS
    assert item["ttl"] > svc.clock.now()
    assert isinstance(item["ciphertext"], bytes)


@pytest.mark.parametrize("differs", ["session", "user", "workspace"])
def test_ciphertext_moved_to_another_notebook_fails_to_decrypt(
    notes: NotesService, svc: Services, differs: str
) -> None:
    source = new_notebook()
    target = {
        "session": Notebook(WS, USER, new_session()),
        "user": Notebook(WS, f"other-{uuid.uuid4().hex[:8]}", source.session_id),
        "workspace": Notebook(f"ws-other-{uuid.uuid4().hex[:8]}", USER, source.session_id),
    }[differs]
    if differs == "workspace":
        svc.key_store.create_branch_key(target.workspace_id)
        svc.table.put({**keys.as_key(keys.meta(target.workspace_id)), "workspaceId": target.workspace_id})
    notes.update(source, "secret of the source notebook")
    notes.update(target, "the target's own notes")
    stolen = svc.table.get(*key_of(source))
    assert stolen is not None
    svc.table.put({**stolen, **keys.as_key(key_of(target))})  # same revision: only the notebook differs
    with pytest.raises(DecryptionFailed):
        notes.get(target)
    with pytest.raises(DecryptionFailed):  # a cold cipher (no cached branch key) checks the context the same way
        NotesService(svc.table, build_services(svc.settings).cipher, svc.clock).get(target)


def test_concurrent_updates_lose_no_revision(notes: NotesService) -> None:
    sid = new_notebook()
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


def test_an_admission_opens_only_its_own_sessions_notebook_while_it_is_live(settings: Settings) -> None:
    scene = make_scene(settings)
    session = new_session()
    mine = scene.admit(session=session)
    notes = scene.svc.notes
    notebook = notes.open(mine.admission.id, mine.credential, session)
    assert notebook == Notebook(scene.ws, scene.owner, session)
    notes.update(notebook, "the owner's plan")
    with pytest.raises(SessionNotFound):  # another session id: as if it had never been used
        notes.open(mine.admission.id, mine.credential, new_session())
    with pytest.raises(InvalidAdmission):
        notes.open(mine.admission.id, "not-the-credential", session)

    # Another member reusing the session id reaches a separate, empty notebook of their own.
    member = f"member-{uuid.uuid4().hex[:8]}"
    scene.svc.access.put_member(scene.owner, scene.ws, member, Role.EDITOR)
    theirs = scene.admit(user=member, session=session)
    their_notebook = notes.open(theirs.admission.id, theirs.credential, session)
    assert their_notebook == Notebook(scene.ws, member, session)
    assert notes.get(their_notebook) == Notes("", 0, 0, None)

    # A key session without the `notes` scope opens no notebook.
    read_only = scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, [Scope.MEMORY_READ])
    scoped = scene.admit(key_session=read_only.id, session=session)
    with pytest.raises(ScopeNotGranted):
        notes.open(scoped.admission.id, scoped.credential, session)

    scene.clock.advance(15 * 60 + 1)  # the admission expired
    with pytest.raises(AdmissionRetired):
        notes.open(mine.admission.id, mine.credential, session)
    assert notes.get(notebook).text == "the owner's plan"
