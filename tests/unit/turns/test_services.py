"""The domain services over the in-memory table (no sockets): fast checks of every guard the fence, recall,
admission, document and notes rely on, including events that land between a service's read and its write."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.memory_table import MemoryKeyStore, MemoryTable
from tests.unit.fakes import FakeCipher
from workspace_memory.api.models.automation import CaptureOut
from workspace_memory.document.edits import AddEdit, RemoveEdit
from workspace_memory.document.policy import Mode, PolicyService
from workspace_memory.document.service import RECALL_MAX_BYTES, DocumentService
from workspace_memory.kernel.clock import ManualClock
from workspace_memory.kernel.errors import (
    ConversationNotFound,
    Forbidden,
    ScopeNotGranted,
    StaleBaseVersion,
    WorkspaceNotFound,
)
from workspace_memory.store import keys
from workspace_memory.turns.admission import (
    AdmissionService,
    Admitted,
    ConversationBound,
    KeySessionInvalid,
    KeySessionRequired,
)
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.authority import Predicate
from workspace_memory.turns.capture import CaptureResult, CaptureService, Outcome, ProposalCleared
from workspace_memory.turns.notes import AdmissionRetired, NotesService, SessionNotFound
from workspace_memory.turns.recall import MemoryWrite, RecallService, RecallStatus
from workspace_memory.workspaces.access import AccessService, Role, ShareType
from workspace_memory.workspaces.keysessions import ALL_SCOPES, KeySessionService, Scope, ScopeExceedsRole

pytestmark = pytest.mark.unit

OWNER, EDITOR, VIEWER = "olivia", "eddie", "vera"
DOC = "# Memory\n- deploys on Fridays\n"


class StepClock(ManualClock):
    """A manual clock that can jump forward by itself on its n-th reading: time passing between a service's
    snapshot and its commit."""

    def __init__(self) -> None:
        super().__init__()
        self.readings = 0
        self.jumps: dict[int, float] = {}

    def now(self) -> float:
        self.readings += 1
        self.advance(self.jumps.pop(self.readings, 0.0))
        return super().now()


@dataclass
class World:
    table: MemoryTable = field(default_factory=MemoryTable)
    key_store: MemoryKeyStore = field(default_factory=MemoryKeyStore)
    clock: StepClock = field(default_factory=StepClock)

    def __post_init__(self) -> None:
        self.cipher = FakeCipher(self.key_store)
        t, c, k = self.table, self.cipher, self.clock
        self.access = AccessService(t, k, self.key_store, c)
        self.policy = PolicyService(t, k)
        self.document = DocumentService(t, c, k)
        self.key_sessions = KeySessionService(t, k, c)
        self.admission = AdmissionService(t, c, k)
        self.recall = RecallService(t, c, k)
        self.capture = CaptureService(t, c, k)
        self.notes = NotesService(t, c, k)

    def workspace(self, mode: Mode = Mode.AUTO, content: str = DOC) -> str:
        ws = self.access.create_workspace(OWNER, "team", ShareType.SHARED)
        self.access.put_member(OWNER, ws, EDITOR, Role.EDITOR)
        self.access.put_member(OWNER, ws, VIEWER, Role.VIEWER)
        self.access.set_ai(OWNER, ws, True)
        self.policy.set(OWNER, ws, mode, 0)
        if content:
            self.document.save(OWNER, ws, content, 0)
        return ws

    def admit(self, ws: str, user: str = EDITOR, conv: str = "conv-1", key: str = "k1", **extra: Any) -> Admitted:
        request = AdmissionRequest(conversation_id=conv, workspace_id=ws, user_id=user, idempotency_key=key, **extra)
        return self.admission.admit(request)

    def capture_add(self, ws: str, admitted: Admitted, line: str = "- new line", base: int = 1) -> CaptureResult:
        adm = admitted.admission
        return self.capture.capture(ws, adm.id, admitted.credential, [AddEdit(line=line)], base, f"memory:{adm.id}")

    def head(self, ws: str) -> tuple[int, str]:
        view = self.document.read(OWNER, ws)
        return view.version, view.content

    def snapshot(self) -> dict[keys.Key, dict[str, object]]:
        return copy.deepcopy(self.table.items)


# --- the document -------------------------------------------------------------------------------


def test_save_is_one_transaction_and_reads_nothing_before_it() -> None:
    w = World()
    ws = w.workspace()
    reads, transactions = w.table.reads, w.table.transactions
    w.document.save(EDITOR, ws, DOC + "- one more\n", 1)
    assert (w.table.reads - reads, w.table.transactions - transactions) == (0, 1)


@pytest.mark.parametrize(("user", "error"), [(VIEWER, Forbidden), ("stranger", WorkspaceNotFound)])
def test_a_refused_save_says_why_without_telling_a_stranger_anything(user: str, error: type[Exception]) -> None:
    w = World()
    ws = w.workspace()
    before = w.snapshot()
    with pytest.raises(error):
        w.document.save(user, ws, "x", 0)  # a stale base too: write right is judged first
    assert w.snapshot() == before


def test_save_on_a_stale_base_or_a_base_ahead_of_the_head_writes_nothing() -> None:
    w = World()
    ws = w.workspace()
    before = w.snapshot()
    for base in (0, 2, 7):
        with pytest.raises(StaleBaseVersion) as info:
            w.document.save(OWNER, ws, "lost update", base)
        assert info.value.details == {"current_version": 1}
    assert w.snapshot() == before


def test_save_on_a_tombstoned_head_is_refused() -> None:
    w = World()
    ws = w.workspace()
    w.table.items[keys.head(ws)]["tombstone"] = True
    before = w.snapshot()
    with pytest.raises(WorkspaceNotFound):  # a deleted workspace's head: the 404 of every route, not a 409
        w.document.save(OWNER, ws, "resurrected", 1)
    assert w.snapshot() == before


def test_a_writer_demoted_between_read_and_write_gets_403_and_nothing_is_written() -> None:
    w = World()
    ws = w.workspace()
    before_head = w.head(ws)

    def demote(table: MemoryTable) -> None:
        table.before_transact = None
        w.access.put_member(OWNER, ws, EDITOR, Role.VIEWER)

    w.table.before_transact = demote
    with pytest.raises(Forbidden):
        w.document.save(EDITOR, ws, "after demotion", 1)
    assert w.head(ws) == before_head
    assert w.table.get(*keys.version(ws, 2)) is None


def test_clear_empties_the_document_bumps_the_generation_and_keeps_the_mode() -> None:
    w = World()
    ws = w.workspace()
    commit = w.document.clear(EDITOR, ws, 1)
    assert commit.clear_generation == 1
    assert w.head(ws) == (2, "")
    policy = w.policy.get(OWNER, ws)
    assert (policy.mode, policy.revision, policy.clear_generation) == (Mode.AUTO, 1, 1)


# --- admission and ownership --------------------------------------------------------------------


def test_a_conversation_answers_only_to_the_user_and_workspace_of_its_first_admission() -> None:
    w = World()
    ws, other_ws = w.workspace(), w.workspace()
    w.admit(ws, EDITOR, key="k1")
    for user, key in ((OWNER, "k2"), (OWNER, "k1"), (VIEWER, "k3")):  # "k1": a resend by another user
        with pytest.raises(ConversationNotFound):
            w.admit(ws, user, key=key)
    with pytest.raises(ConversationBound):
        w.admit(other_ws, EDITOR, key="k4")
    assert w.admit(ws, EDITOR, key="k1").replayed


def test_a_key_session_must_be_the_users_own_and_live() -> None:
    w = World()
    ws = w.workspace()
    others = w.key_sessions.open(OWNER, ws, 3600, ALL_SCOPES)
    with pytest.raises(KeySessionInvalid):
        w.admit(ws, EDITOR, key_session_id=others.id)
    mine = w.key_sessions.open(EDITOR, ws, 60, ALL_SCOPES)
    w.clock.advance(61)
    with pytest.raises(KeySessionInvalid):
        w.admit(ws, EDITOR, key_session_id=mine.id)
    with pytest.raises(KeySessionRequired):
        w.admission.admit_for_runtime(
            AdmissionRequest(conversation_id="c", workspace_id=ws, user_id=EDITOR, idempotency_key="k")
        )
    assert w.table.get(*keys.conversation_owner("conv-1")) is None


def test_an_admission_freezes_the_key_sessions_scopes_and_the_session_id() -> None:
    w = World()
    ws = w.workspace()
    ks = w.key_sessions.open(EDITOR, ws, 3600, [Scope.MEMORY_READ])
    adm = w.admit(ws, EDITOR, key_session_id=ks.id, session_id="s-1").admission
    assert (adm.scopes, adm.session_id) == (frozenset({Scope.MEMORY_READ}), "s-1")
    with pytest.raises(ScopeNotGranted):
        w.capture_add(ws, w.admit(ws, EDITOR, key_session_id=ks.id, key="k2"))


# --- capture: early refusal, then the fence -----------------------------------------------------


def retire_by(event: str) -> Callable[[World, str, Admitted], object]:
    """Competing events, each retiring an admission made before it."""
    events: dict[str, Callable[[World, str, Admitted], object]] = {
        "admission consumed": lambda w, ws, a: w.table.items[keys.admission(a.admission.id)].update(status="committed"),
        "credential slot taken": lambda w, ws, a: w.admit(ws, EDITOR, key="newer"),
        "consent bumped": lambda w, ws, a: (w.access.set_ai(OWNER, ws, False), w.access.set_ai(OWNER, ws, True)),
        "key session revoked": lambda w, ws, a: w.key_sessions.revoke(EDITOR, ws, a.admission.key_session_id or ""),
        "cleared": lambda w, ws, a: w.document.clear(OWNER, ws, 1),
        "mode changed": lambda w, ws, a: w.policy.set(OWNER, ws, Mode.READ_ONLY, 1),
        "writer demoted": lambda w, ws, a: w.access.put_member(OWNER, ws, EDITOR, Role.VIEWER),
    }
    return events[event]


PREDICATE_OF_EVENT = {
    "admission consumed": Predicate.ADMISSION,
    "credential slot taken": Predicate.CREDENTIAL,
    "consent bumped": Predicate.CONSENT,
    "key session revoked": Predicate.KEY_SESSION,
    "cleared": Predicate.POLICY,
    "mode changed": Predicate.POLICY,
    "writer demoted": Predicate.ACCESS,
}


@pytest.mark.parametrize("event", list(PREDICATE_OF_EVENT))
def test_an_event_before_the_read_retires_the_admission_before_anything_is_decrypted(event: str) -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR, key_session_id=w.key_sessions.open(EDITOR, ws, 3600, ALL_SCOPES).id)
    retire_by(event)(w, ws, admitted)
    before, decrypts = w.snapshot(), w.cipher.decrypts
    for guess in ("- deploys on Fridays", "- a wrong guess"):  # a retired admission is no oracle
        adm = admitted.admission
        result = w.capture.capture(ws, adm.id, admitted.credential, [RemoveEdit(line=guess)], 1, f"memory:{adm.id}")
        assert CaptureOut.of(result).wire() == {"outcome": "refused", "predicate": PREDICATE_OF_EVENT[event].value}
    assert w.cipher.decrypts == decrypts
    assert w.snapshot() == before


@pytest.mark.parametrize("event", list(PREDICATE_OF_EVENT))
def test_an_event_between_the_read_and_the_transaction_is_caught_by_the_fence(event: str) -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR, key_session_id=w.key_sessions.open(EDITOR, ws, 3600, ALL_SCOPES).id)

    def land(table: MemoryTable) -> None:
        table.before_transact = None  # the event's own writes must not land it again
        retire_by(event)(w, ws, admitted)

    w.table.before_transact = land
    result = w.capture_add(ws, admitted)
    assert CaptureOut.of(result).wire() == {"outcome": "refused", "predicate": PREDICATE_OF_EVENT[event].value}
    assert "- new line" not in w.head(ws)[1]
    assert w.table.items[keys.admission(admitted.admission.id)]["status"] == (
        "committed" if event == "admission consumed" else "admitted"
    )


@pytest.mark.parametrize(
    ("what", "jump_at"),
    [("admission", 15 * 60), ("key session", 60)],
    ids=["admission expires", "key session expires"],
)
def test_expiry_between_the_read_and_the_transaction_is_caught_by_the_fence(what: str, jump_at: int) -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR, key_session_id=w.key_sessions.open(EDITOR, ws, 60, ALL_SCOPES).id)
    # Capture reads the clock once for its snapshot checks and once more when it commits.
    w.clock.jumps = {w.clock.readings + 2: jump_at + 1}
    result = w.capture_add(ws, admitted)
    expected = Predicate.ADMISSION if what == "admission" else Predicate.KEY_SESSION
    assert CaptureOut.of(result).wire() == {"outcome": "refused", "predicate": expected.value}
    assert w.head(ws)[0] == 1


def test_a_base_that_is_not_the_head_read_is_a_conflict_and_writes_nothing() -> None:
    w = World()
    ws = w.workspace()
    w.document.save(OWNER, ws, DOC + "- a human's update\n", 1)
    admitted = w.admit(ws, EDITOR)
    before = w.snapshot()
    result = w.capture_add(ws, admitted, base=1)  # computed on version 1; the head is 2
    out = CaptureOut.of(result).wire()
    assert (out["outcome"], out["predicate"], out["version"]) == ("conflict", "head", 2)
    assert out["proposal"]["baseVersion"] == 2
    assert w.snapshot() == before


@pytest.mark.parametrize(("spare", "outcome"), [(0, "committed"), (1, "refused")], ids=["exactly 8192", "8193"])
def test_a_result_of_exactly_the_recall_bound_commits_and_one_byte_more_is_refused(spare: int, outcome: str) -> None:
    line = "- z"  # the edit adds these 3 bytes and a newline
    head = "#" + "y" * (RECALL_MAX_BYTES - len(line) - 1 - 2 + spare) + "\n"
    w = World()
    ws = w.workspace(content=head)
    result = CaptureOut.of(w.capture_add(ws, w.admit(ws, EDITOR), line=line)).wire()
    assert result["outcome"] == outcome
    if outcome == "committed":
        assert w.document.read(OWNER, ws).bytes == RECALL_MAX_BYTES
    else:
        assert result == {"outcome": "refused", "predicate": "oversized"}
        assert w.head(ws)[0] == 1


def test_an_oversized_head_refuses_even_a_remove() -> None:
    w = World()
    ws = w.workspace(content="- drop me\n" + "y" * RECALL_MAX_BYTES + "\n")
    admitted = w.admit(ws, EDITOR)
    adm = admitted.admission
    result = w.capture.capture(ws, adm.id, admitted.credential, [RemoveEdit(line="- drop me")], 1, f"memory:{adm.id}")
    assert CaptureOut.of(result).wire() == {"outcome": "refused", "predicate": "oversized"}
    assert w.head(ws)[0] == 1


def test_applying_a_proposal_when_a_clear_lands_between_read_and_write_is_refused() -> None:
    w = World()
    ws = w.access.create_workspace(OWNER, "team", ShareType.SHARED)  # no policy row yet
    w.document.save(OWNER, ws, DOC, 0)

    def clear_first(table: MemoryTable) -> None:
        table.before_transact = None
        w.document.clear(OWNER, ws, 1)

    w.table.before_transact = clear_first
    with pytest.raises(ProposalCleared):
        w.capture.apply_proposal(OWNER, ws, [{"op": "add", "line": "- stale"}], 0, 1)
    assert w.head(ws) == (2, "")


# --- recall -------------------------------------------------------------------------------------


def test_recall_after_ai_is_turned_off_and_on_again_is_no_access() -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR)
    w.access.set_ai(OWNER, ws, False)
    w.access.set_ai(OWNER, ws, True)
    result = w.recall.recall(ws, admitted.admission.id, admitted.credential)
    assert (result.status, result.revision) == (RecallStatus.NO_ACCESS, None)
    assert "deploys" not in result.block


def test_recall_after_the_key_session_expired_is_no_access() -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR, key_session_id=w.key_sessions.open(EDITOR, ws, 60, ALL_SCOPES).id)
    assert w.recall.recall(ws, admitted.admission.id, admitted.credential).status is RecallStatus.OK
    w.clock.advance(61)
    assert w.recall.recall(ws, admitted.admission.id, admitted.credential).status is RecallStatus.NO_ACCESS


@pytest.mark.parametrize(
    ("mode", "user", "scopes", "expected"),
    [
        (Mode.AUTO, EDITOR, ALL_SCOPES, MemoryWrite.COMMIT),
        (Mode.AUTO, VIEWER, None, MemoryWrite.NONE),
        (Mode.READ_ONLY, VIEWER, None, MemoryWrite.PROPOSE),
        (Mode.READ_ONLY, VIEWER, [Scope.MEMORY_READ], MemoryWrite.NONE),
        (Mode.OFF, EDITOR, ALL_SCOPES, MemoryWrite.NONE),
        (Mode.AUTO, EDITOR, [Scope.MEMORY_READ], MemoryWrite.NONE),
    ],
)
def test_recall_says_whether_a_write_tool_could_commit_or_propose(
    mode: Mode, user: str, scopes: Iterable[Scope] | None, expected: MemoryWrite
) -> None:
    """Under a key session of the given scopes; None: the human route (all scopes; a viewer may delegate
    reading only, so a viewer's proposal is the human route's alone)."""
    w = World()
    ws = w.workspace(mode)
    ks = None if scopes is None else w.key_sessions.open(user, ws, 3600, scopes).id
    admitted = w.admit(ws, user, key_session_id=ks)
    assert w.recall.recall(ws, admitted.admission.id, admitted.credential).memory_write is expected


def test_a_key_session_opened_without_scopes_reads_only() -> None:
    w = World()
    ws = w.workspace()
    ks = w.key_sessions.open(EDITOR, ws, 3600)
    assert ks.scopes == frozenset({Scope.MEMORY_READ})
    with pytest.raises(ScopeNotGranted):
        w.capture_add(ws, w.admit(ws, EDITOR, key_session_id=ks.id))


@pytest.mark.parametrize("scopes", [[Scope.MEMORY_WRITE], [Scope.NOTES], list(ALL_SCOPES)])
def test_a_viewer_may_delegate_reading_only(scopes: list[Scope]) -> None:
    w = World()
    ws = w.workspace()
    before = w.snapshot()
    with pytest.raises(ScopeExceedsRole) as refused:
        w.key_sessions.open(VIEWER, ws, 3600, scopes)
    assert refused.value.code == "SCOPE_EXCEEDS_ROLE"
    assert w.snapshot() == before
    assert w.key_sessions.open(VIEWER, ws, 3600).scopes == frozenset({Scope.MEMORY_READ})


def test_an_admission_holds_only_what_the_role_delegates_now() -> None:
    w = World()
    ws = w.workspace()
    ks = w.key_sessions.open(EDITOR, ws, 3600, ALL_SCOPES)
    w.access.put_member(OWNER, ws, EDITOR, Role.VIEWER)
    assert w.admit(ws, EDITOR, key_session_id=ks.id).admission.scopes == frozenset({Scope.MEMORY_READ})


# --- notes --------------------------------------------------------------------------------------


def test_notes_reach_only_the_admissions_own_live_session() -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws, EDITOR, session_id="s-1")
    adm, cred = admitted.admission.id, admitted.credential
    book = w.notes.open(adm, cred, "s-1")
    w.notes.update(book, "plan")
    with pytest.raises(SessionNotFound):
        w.notes.open(adm, cred, "s-2")
    w.access.set_ai(OWNER, ws, False)
    with pytest.raises(AdmissionRetired):
        w.notes.open(adm, cred, "s-1")
    assert w.notes.get(book).text == "plan"


def test_notes_need_the_notes_scope() -> None:
    w = World()
    ws = w.workspace()
    ks = w.key_sessions.open(EDITOR, ws, 3600, [Scope.MEMORY_READ, Scope.MEMORY_WRITE])
    admitted = w.admit(ws, EDITOR, key_session_id=ks.id, session_id="s-1")
    with pytest.raises(ScopeNotGranted):
        w.notes.open(admitted.admission.id, admitted.credential, "s-1")


def test_a_capture_outcome_is_committed_through_the_fence() -> None:
    w = World()
    ws = w.workspace()
    result = w.capture_add(ws, w.admit(ws, EDITOR))
    assert CaptureOut.of(result).wire()["outcome"] == Outcome.COMMITTED.value
    assert w.head(ws) == (2, DOC + "- new line\n")
