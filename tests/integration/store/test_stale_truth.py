"""A 409 names the value its own transaction lost to, proven by interleaving on the real moto server.

Each test wraps the service's table so that, around its one compare-and-set, a second service instance lands
two writes: one right before the transaction (so it loses to that value) and one right after the cancelled
transaction has returned (so any read made from then on would see a later value). The answer must name the
first: what the transaction saw, never what a read after it finds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from tests.integration.entry_support import draft
from tests.integration.fence_support import Scene, make_scene
from tests.integration.turns.test_fence_guards import admit
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document.policy import Mode, Policy
from workspace_memory.kernel.errors import StaleBaseVersion, StalePolicyRevision, StaleRevision
from workspace_memory.kernel.settings import Settings
from workspace_memory.store.changes import Change
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.turns.admission import AdmissionRef
from workspace_memory.turns.capture import Outcome
from workspace_memory.turns.notes import Notebook, NotesConflict
from workspace_memory.workspaces.access import load_caller

pytestmark = pytest.mark.integration


def around_the_transaction(
    monkeypatch: pytest.MonkeyPatch, table: Table, before: Callable[[], object], after: Callable[[], object]
) -> list[str]:
    """The first `transact` of `table`: `before` lands first, then, once the cancelled transaction has
    returned, `after`. Returns what landed, so a test can tell the interleaving really happened."""
    inner = table.transact
    landed: list[str] = []

    def transact(changes: Sequence[Change]) -> None:
        if landed:
            return inner(changes)
        landed.append("before")
        before()
        try:
            inner(changes)
        except TransactionCancelled:
            landed.append("after")
            after()
            raise

    monkeypatch.setattr(table, "transact", transact)
    return landed


@pytest.fixture
def scene(settings: Settings) -> Scene:
    """`auto`, AI on, the document saved once (version 1), policy revision 1."""
    return make_scene(settings)


@pytest.fixture
def other(settings: Settings, scene: Scene) -> Services:
    """The concurrent writer: another warm process on the same table."""
    return build_services(settings, clock=scene.clock)


def bump_document(other: Services, scene: Scene) -> None:
    version = other.document.read(scene.owner, scene.ws).version
    other.document.save(scene.owner, scene.ws, f"concurrent {version + 1}", version)


def head_version(scene: Scene) -> int:
    return scene.head()[0]


DOCUMENT_WRITES: dict[str, Callable[[Scene, int], object]] = {
    "save": lambda s, base: s.svc.document.save(s.owner, s.ws, "mine", base),
    "clear": lambda s, base: s.svc.document.clear(s.owner, s.ws, base),
    "undo": lambda s, base: s.svc.document.undo(s.owner, s.ws, 1, base),
    "apply a proposal": lambda s, base: s.svc.capture.apply_proposal(
        s.owner, s.ws, [{"op": "add", "line": "- applied"}], 0, base
    ),
}


@pytest.mark.parametrize("write", DOCUMENT_WRITES.values(), ids=DOCUMENT_WRITES.keys())
def test_a_stale_base_names_the_version_that_refused_it(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services, write: Callable[[Scene, int], object]
) -> None:
    landed = around_the_transaction(
        monkeypatch, scene.svc.table, lambda: bump_document(other, scene), lambda: bump_document(other, scene)
    )
    with pytest.raises(StaleBaseVersion) as refused:
        write(scene, 1)
    assert landed == ["before", "after"]
    assert refused.value.details == {"current_version": 2}  # not 3, the head by the time a read could look
    assert head_version(scene) == 3


def test_a_base_ahead_of_the_head_is_never_answered_with_itself(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services
) -> None:
    """The contradiction once measured under concurrency: "base 3 is not the current version", currentVersion 3
    (the head was 2 when the transaction judged it, and reached 3 before the old second read)."""
    around_the_transaction(
        monkeypatch, scene.svc.table, lambda: bump_document(other, scene), lambda: bump_document(other, scene)
    )
    with pytest.raises(StaleBaseVersion) as refused:
        scene.svc.document.save(scene.owner, scene.ws, "from the future", 3)
    assert refused.value.details == {"current_version": 2}
    assert head_version(scene) == 3


def test_a_capture_that_lost_its_head_is_a_conflict_on_the_head_it_lost_to(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services
) -> None:
    admitted = admit(scene)
    around_the_transaction(
        monkeypatch, scene.svc.table, lambda: bump_document(other, scene), lambda: bump_document(other, scene)
    )
    result = scene.capture(admitted, "- agent line", 1)
    assert (result.outcome, result.version) == (Outcome.CONFLICT, 2)
    assert result.proposal is not None
    assert result.proposal.base_version == 2
    assert head_version(scene) == 3


def test_a_stale_policy_revision_names_the_policy_that_refused_it(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services
) -> None:
    def set_mode(mode: Mode, expected: int) -> Callable[[], object]:
        return lambda: other.policy.set(scene.owner, scene.ws, mode, expected)

    around_the_transaction(monkeypatch, scene.svc.table, set_mode(Mode.READ_ONLY, 1), set_mode(Mode.AUTO, 2))
    with pytest.raises(StalePolicyRevision) as refused:
        scene.svc.policy.set(scene.owner, scene.ws, Mode.OFF, 1)
    assert refused.value.details == {"current": Policy(Mode.READ_ONLY, 2, 0)}
    assert other.policy.get(scene.owner, scene.ws).revision == 3


def entry_with_competitor(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services, entry_id: str
) -> Callable[[], int]:
    """Two supersessions of `entry_id` around the next transaction; returns a reader of its head revision."""

    def supersede(base: int) -> Callable[[], object]:
        return lambda: other.entries.supersede(
            scene.owner, scene.ws, entry_id, draft(body=f"by the other {base}"), base
        )

    around_the_transaction(monkeypatch, scene.svc.table, supersede(1), supersede(2))
    return lambda: other.entries.read(scene.owner, scene.ws, entry_id).revision


def test_a_stale_entry_revision_names_the_revision_that_refused_it(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services
) -> None:
    entry_id = scene.svc.entries.create(scene.owner, scene.ws, draft(body="Fridays")).entry_id
    revision = entry_with_competitor(monkeypatch, scene, other, entry_id)
    with pytest.raises(StaleRevision) as refused:
        scene.svc.entries.supersede(scene.owner, scene.ws, entry_id, draft(body="Tuesdays"), 1)
    assert refused.value.details == {"current_revision": 2}
    assert revision() == 3


@pytest.mark.parametrize("kind", ["save", "forget"])
def test_accepting_a_candidate_on_a_moved_entry_names_the_revision_that_refused_it(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services, kind: str
) -> None:
    svc, ws, owner = scene.svc, scene.ws, scene.owner
    entry_id = svc.entries.create(owner, ws, draft(body="Fridays")).entry_id
    if kind == "save":
        candidate = svc.entries.propose(owner, ws, draft(body="Tuesdays"), entry_id=entry_id, base_revision=1)
    else:
        caller, _ = load_caller(svc.table, ws, owner)
        admission = AdmissionRef("conv", ws, owner, None).encode("adm_" + "0" * 24)
        candidate = svc.entries.propose_forget(caller, entry_id, admission, [], member_check=True)
    revision = entry_with_competitor(monkeypatch, scene, other, entry_id)
    with pytest.raises(StaleRevision) as refused:
        svc.entries.accept(owner, ws, candidate, 1)
    assert refused.value.details == {"current_revision": 2}
    assert revision() == 3


def test_a_stale_notes_revision_names_the_revision_that_refused_it(
    monkeypatch: pytest.MonkeyPatch, scene: Scene, other: Services
) -> None:
    book = Notebook(scene.ws, scene.owner, "s1")
    scene.svc.notes.put(book, "first", 0)

    def put(expected: int) -> Callable[[], object]:
        return lambda: other.notes.put(book, f"by the other {expected}", expected)

    around_the_transaction(monkeypatch, scene.svc.table, put(1), put(2))
    with pytest.raises(NotesConflict) as refused:
        scene.svc.notes.put(book, "mine", 1)
    assert refused.value.current_revision == 2
    assert other.notes.get(book).revision == 3
