"""Guards no other test holds alone: each test here fails when its one guard is removed from the source.

The fence matrix (test_fence_matrix.py) lands every competing event before capture's read, so a fence
condition that a read-time check also covers is never the only thing standing. Here the event lands inside
capture's window instead: the services run over `Interleaved`, the real table with a hook that fires right
after the authority snapshot is read (for time: the clock moves before capture takes `now`) or right before
the transaction is sent (for rows: the event commits first). What stops the capture then is the fence
transaction's own condition, and only it.

The remaining tests pin boundary and identity guards outside the fence: recall's own expiry and consent
checks, the 8192-byte bound, `apply_proposal`'s generation check, Save's head condition and the two
admission identity checks.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from tests.integration.fence_support import DOC, Scene, add_member, make_scene
from workspace_memory.document.edits import AddEdit, Edit, RemoveEdit, apply_edits
from workspace_memory.document.policy import Mode
from workspace_memory.document.service import DocumentService
from workspace_memory.kernel.errors import IdempotencyKeyReused, NotFound, StaleBaseVersion, WorkspaceNotFound
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.store.changes import Change
from workspace_memory.store.ports import Item, Table
from workspace_memory.turns.admission import Admitted, ConversationBound, KeySessionInvalid
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.authority import Predicate
from workspace_memory.turns.capture import CaptureResult, CaptureService, Outcome, ProposalCleared
from workspace_memory.turns.recall import RecallStatus
from workspace_memory.workspaces.access import Role, ShareType
from workspace_memory.workspaces.keysessions import ALL_SCOPES

pytestmark = pytest.mark.integration

LINE = "- captured by the agent"
ADMISSION_TTL = 15 * 60


class Interleaved:
    """The real table, with one competing event slotted into an operation's window.

    `after_read` runs once, right after the first consistent read (`get_many`: capture's authority snapshot)
    has returned; `before_write` runs once, right before the first transaction is sent. The event itself
    goes through the real services and the real table, so it commits before the transaction is judged."""

    def __init__(
        self,
        inner: Table,
        *,
        after_read: Callable[[], object] | None = None,
        before_write: Callable[[], object] | None = None,
    ) -> None:
        self.inner = inner
        self._after_read = after_read
        self._before_write = before_write
        self.transactions = 0

    def get(self, pk: str, sk: str) -> Item | None:
        return self.inner.get(pk, sk)

    def get_many(self, keys_: Sequence[tuple[str, str]]) -> list[Item | None]:
        items = self.inner.get_many(keys_)
        hook, self._after_read = self._after_read, None
        if hook is not None:
            hook()
        return items

    def query(
        self,
        pk: str,
        sk_prefix: str,
        *,
        limit: int,
        newest_first: bool,
        start_after: str | None = None,
        attributes: Sequence[str] | None = None,
    ) -> list[Item]:
        return self.inner.query(
            pk, sk_prefix, limit=limit, newest_first=newest_first, start_after=start_after, attributes=attributes
        )

    def put(self, item: Item) -> None:
        self.inner.put(item)

    def workspace_keys(
        self, workspace_id: str, limit: int, start_after: tuple[str, str] | None = None
    ) -> list[tuple[str, str]]:
        return self.inner.workspace_keys(workspace_id, limit, start_after)

    def member_keys(
        self, user_id: str, sk_prefix: str, *, limit: int, start_after: tuple[str, str] | None = None
    ) -> list[tuple[str, str]]:
        return self.inner.member_keys(user_id, sk_prefix, limit=limit, start_after=start_after)

    def transact(self, changes: Sequence[Change]) -> None:
        hook, self._before_write = self._before_write, None
        if hook is not None:
            hook()
        self.transactions += 1
        self.inner.transact(changes)


# -- helpers -------------------------------------------------------------------------------------


def admit(scene: Scene, *, user: str | None = None, ttl: int = 3600, conv: str | None = None) -> Admitted:
    """An admission under a key session of the same user and workspace (automation admissions need one)."""
    who = user or scene.owner
    session = scene.svc.key_sessions.open(who, scene.ws, ttl, ALL_SCOPES)
    return scene.admit(conv, user=who, key_session=session.id)


def capture_via(service: CaptureService, scene: Scene, admitted: Admitted, edits: list[Edit]) -> CaptureResult:
    adm = admitted.admission
    return service.capture(scene.ws, adm.id, admitted.credential, edits, 1, f"memory:{adm.id}")


def add(line: str = LINE) -> list[Edit]:
    return [AddEdit(line=line)]


def stored_head(scene: Scene) -> tuple[int, str, bytes]:
    head = scene.svc.table.get(*keys.head(scene.ws))
    assert head is not None
    return head["headVersion"], head["sha256"], head["ciphertext"]


def version_numbers(scene: Scene) -> list[int]:
    return [v.version for v in scene.svc.document.history(scene.owner, scene.ws, 50, None).versions]


def admission_item(scene: Scene, admitted: Admitted) -> Item:
    item = scene.svc.table.get(*keys.admission(admitted.admission.id))
    assert item is not None
    return item


def delete_row(scene: Scene, key: keys.Key) -> None:
    scene.svc.clients.dynamodb.delete_item(TableName=scene.svc.settings.table_name, Key=keys.as_key(key))


def set_expiry(scene: Scene, key: keys.Key, expires_at: int) -> None:
    item = scene.svc.table.get(*key)
    assert item is not None
    scene.svc.table.put({**item, "expiresAt": expires_at})


# -- the fence, with the competing event between capture's read and its transaction -------------------


@dataclass(frozen=True)
class Window:
    """A competing event and where in capture's window it lands."""

    name: str
    predicate: Predicate
    land: Callable[[Scene, Admitted], object]
    after_read: bool = False  # time moves before capture takes `now`; rows change right before the write
    by_editor: bool = False
    session_ttl: int = 3600


def _clear(scene: Scene, _: Admitted) -> None:
    scene.svc.document.clear(scene.owner, scene.ws, scene.head()[0])


def _human_save(scene: Scene, _: Admitted) -> None:
    version, text = scene.head()
    scene.svc.document.save(scene.owner, scene.ws, text + "- a human line\n", version)


def _revoke(scene: Scene, admitted: Admitted) -> None:
    assert admitted.admission.key_session_id is not None
    scene.svc.key_sessions.revoke(scene.owner, scene.ws, admitted.admission.key_session_id)


def _consume(scene: Scene, admitted: Admitted) -> None:
    """The same turn's other capture commits first (a second logical capture raced the first)."""
    first = scene.capture(admitted, "- the turn's first capture", scene.head()[0])
    assert first.outcome is Outcome.COMMITTED, first


def _expire_key_session_row(scene: Scene, admitted: Admitted) -> None:
    """The session's expiry reached as the write is sent (a row change: immune to any read-time check)."""
    assert admitted.admission.key_session_id is not None
    set_expiry(scene, keys.key_session(scene.ws, admitted.admission.key_session_id), int(scene.clock.now()))


def _expire_admission_row(scene: Scene, admitted: Admitted) -> None:
    set_expiry(scene, keys.admission(admitted.admission.id), int(scene.clock.now()))


def _demote(scene: Scene, admitted: Admitted) -> None:
    scene.svc.access.put_member(scene.owner, scene.ws, admitted.admission.user_id, Role.VIEWER)


def _remove_member(scene: Scene, admitted: Admitted) -> None:
    delete_row(scene, keys.member(scene.ws, admitted.admission.user_id))


WINDOWS = [
    Window("clear", Predicate.POLICY, _clear),
    Window("mode read_only", Predicate.POLICY, lambda s, _: s.set_mode(Mode.READ_ONLY)),
    Window("mode auto to auto", Predicate.POLICY, lambda s, _: s.set_mode(Mode.AUTO)),
    Window("ai disabled", Predicate.CONSENT, lambda s, _: s.svc.access.set_ai(s.owner, s.ws, False)),
    Window("consent bumped", Predicate.CONSENT, lambda s, _: s.svc.access.set_ai(s.owner, s.ws, True)),
    Window("newer admission", Predicate.CREDENTIAL, lambda s, a: admit(s, conv=a.admission.conversation_id)),
    Window("key session revoked", Predicate.KEY_SESSION, _revoke),
    Window("key session expired (clock)", Predicate.KEY_SESSION, lambda s, _: s.clock.advance(61), True, False, 60),
    Window("key session expired (row)", Predicate.KEY_SESSION, _expire_key_session_row),
    Window("admission expired (clock)", Predicate.ADMISSION, lambda s, _: s.clock.advance(ADMISSION_TTL + 1), True),
    Window("admission expired (row)", Predicate.ADMISSION, _expire_admission_row),
    Window("admission consumed", Predicate.ADMISSION, _consume),
    Window("editor demoted to viewer", Predicate.ACCESS, _demote, by_editor=True),
    Window("member removed", Predicate.ACCESS, _remove_member, by_editor=True),
    Window("human save", Predicate.HEAD, _human_save),
]


@pytest.mark.parametrize("window", WINDOWS, ids=[w.name for w in WINDOWS])
def test_event_between_read_and_fence_is_refused_by_the_fence(settings: Settings, window: Window) -> None:
    scene = make_scene(settings)
    user = scene.owner
    if window.by_editor:
        user = f"editor-{uuid.uuid4().hex[:8]}"
        add_member(scene, user, Role.EDITOR)
    admitted = admit(scene, user=user, ttl=window.session_ttl)
    seen: dict[str, Any] = {}

    def land() -> None:
        window.land(scene, admitted)
        seen["head"], seen["text"] = stored_head(scene), scene.head()[1]
        seen["versions"] = version_numbers(scene)

    table = Interleaved(scene.svc.table, **{"after_read" if window.after_read else "before_write": land})
    result = capture_via(CaptureService(table, scene.svc.cipher, scene.clock), scene, admitted, add())

    assert seen, "the competing event never landed"
    assert result.predicate is window.predicate, result
    assert result.outcome is (Outcome.CONFLICT if window.predicate is Predicate.HEAD else Outcome.REFUSED)
    assert result.receipt is None
    if not window.after_read:
        # A row event lands after every read-time judgement could have been made: the transaction decided.
        assert table.transactions == 1
    assert stored_head(scene) == seen["head"]  # byte-identical to what the event left
    assert scene.head()[1] == seen["text"]
    assert LINE not in scene.head()[1]
    assert version_numbers(scene) == seen["versions"]  # no version written
    item = admission_item(scene, admitted)
    if window.name == "admission consumed":
        assert item["status"] == "committed"
        assert item["captureReceipt"]["version"] == 2  # the first capture's receipt, not overwritten
    else:
        assert item["status"] == "admitted"  # the fence rolled back: the admission is not consumed
        assert "captureReceipt" not in item


def test_a_viewers_capture_is_refused_for_write_right(settings: Settings) -> None:
    """No event at all: a viewer may be admitted (recall needs only membership) but may not write.

    Today only the fence's write-right condition refuses this; once capture refuses retired admissions
    early (membership/write right judged on the snapshot), the early check answers it and the fence's
    condition is held by the "editor demoted to viewer" and "member removed" windows above."""
    scene = make_scene(settings)
    viewer = f"viewer-{uuid.uuid4().hex[:8]}"
    add_member(scene, viewer, Role.VIEWER)
    admitted = scene.admit(user=viewer)  # the human route: a viewer's key session can delegate reading only
    before = stored_head(scene)
    result = scene.capture(admitted, LINE, 1)
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.ACCESS)
    assert stored_head(scene) == before
    assert admission_item(scene, admitted)["status"] == "admitted"


def test_a_key_session_that_outlives_the_read_but_not_the_write_refuses_the_capture(settings: Settings) -> None:
    """The realistic form of the expiry race: valid when the authority is read, expired by the time the
    capture takes `now`. While capture judges nothing on its snapshot, only the fence's key-session expiry
    condition stops it; once capture refuses retired admissions early with a `now` taken after the read, that
    check answers first, and the `key session expired (row)` window is what holds the fence's condition."""
    scene = make_scene(settings)
    admitted = admit(scene, ttl=60)
    table = Interleaved(scene.svc.table, after_read=lambda: scene.clock.advance(61))
    result = capture_via(CaptureService(table, scene.svc.cipher, scene.clock), scene, admitted, add())
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.KEY_SESSION)
    assert scene.head() == (1, DOC)
    assert admission_item(scene, admitted)["status"] == "admitted"


def test_a_retry_replays_its_receipt_but_another_base_is_a_second_capture(settings: Settings) -> None:
    """The request hash covers the base version: same edits on another base are not a transport retry."""
    scene = make_scene(settings)
    admitted = admit(scene)
    first = scene.capture(admitted, LINE, 1)
    assert (first.outcome, first.version) == (Outcome.COMMITTED, 2)
    retry = scene.capture(admitted, LINE, 1)
    assert (retry.outcome, retry.version, retry.replayed, retry.current) == (Outcome.COMMITTED, 2, True, True)
    assert retry.receipt == first.receipt
    again = scene.capture(admitted, LINE, 2)
    assert (again.outcome, again.predicate, again.replayed) == (Outcome.REFUSED, Predicate.ADMISSION, False)
    assert version_numbers(scene) == [2, 1]


def test_a_replay_says_whether_its_version_is_still_the_head(settings: Settings) -> None:
    """Issue 21 (Wuu: an operation id names one intent): a retry after a person saved on top answers the same
    receipt, and says it is no longer current, so the agent does not take version 2 for the document."""
    scene = make_scene(settings)
    admitted = admit(scene)
    assert scene.capture(admitted, LINE, 1).version == 2
    scene.svc.document.save(scene.owner, scene.ws, DOC + "- a person's line\n", 2)
    retry = scene.capture(admitted, LINE, 1)
    assert (retry.outcome, retry.version, retry.replayed, retry.current) == (Outcome.COMMITTED, 2, True, False)
    assert version_numbers(scene) == [3, 2, 1]


# -- recall's own checks ----------------------------------------------------------------------------


def test_recall_withholds_memory_once_the_key_session_expired(settings: Settings) -> None:
    scene = make_scene(settings)
    admitted = admit(scene, ttl=60)
    ok = scene.svc.recall.recall(scene.ws, admitted.admission.id, admitted.credential)
    assert ok.status is RecallStatus.OK
    scene.clock.advance(61)  # the session is past its expiry; the admission (15 min) is not
    result = scene.svc.recall.recall(scene.ws, admitted.admission.id, admitted.credential)
    assert (result.status, result.revision) == (RecallStatus.NO_ACCESS, None)
    assert DOC not in result.block
    assert "no longer has access" in result.block


def test_recall_withholds_memory_after_a_consent_bump_with_ai_still_on(settings: Settings) -> None:
    """Turning AI on again while on bumps the consent revision: turns admitted before it are retired."""
    scene = make_scene(settings)
    admitted = admit(scene)
    scene.svc.access.set_ai(scene.owner, scene.ws, True)
    result = scene.svc.recall.recall(scene.ws, admitted.admission.id, admitted.credential)
    assert (result.status, result.revision) == (RecallStatus.NO_ACCESS, None)
    assert DOC not in result.block


@pytest.mark.parametrize("what", ["admission", "key session"])
def test_recall_withholds_memory_at_the_instant_of_expiry(settings: Settings, what: str) -> None:
    """Expiry is exclusive, as in the fence (`expiresAt > :now`): at the stored second itself access is gone."""
    scene = make_scene(settings)
    admitted = admit(scene, ttl=60)
    ks = admitted.admission.key_session_id
    assert ks is not None
    item = scene.svc.table.get(*keys.key_session(scene.ws, ks))
    assert item is not None
    expiry = admitted.admission.expires_at if what == "admission" else item["expiresAt"]
    if what == "admission":  # keep the key session alive past the admission
        set_expiry(scene, keys.key_session(scene.ws, ks), expiry + 60)
    scene.clock.advance(expiry - scene.clock.now())  # exact: the two floats are within a factor of two
    assert scene.clock.now() == expiry
    result = scene.svc.recall.recall(scene.ws, admitted.admission.id, admitted.credential)
    assert (result.status, result.revision) == (RecallStatus.NO_ACCESS, None)


# -- the 8192-byte recall bound at capture ----------------------------------------------------------


def _sized(content_bytes: int, tail: str) -> str:
    """A document of exactly `content_bytes` UTF-8 bytes ending with the line `tail`."""
    filler = content_bytes - len(tail.encode()) - 2
    return "x" * filler + "\n" + tail + "\n"


def test_a_capture_landing_at_exactly_8192_bytes_commits(settings: Settings) -> None:
    line = "- the last line that fits"
    base = _sized(8192 - len(line.encode()) - 1, "- filler")
    assert len(apply_edits(base, add(line)).text.encode()) == 8192
    scene = make_scene(settings, content=base)
    result = scene.capture(admit(scene), line, 1)
    assert (result.outcome, result.version) == (Outcome.COMMITTED, 2), result
    assert scene.svc.document.read(scene.owner, scene.ws).bytes == 8192

    over = make_scene(settings, content=base)
    result = over.capture(admit(over), line + "!", 1)  # one byte more: 8193
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.OVERSIZED)
    assert over.head() == (1, base)


def test_a_head_of_exactly_8192_bytes_still_accepts_a_capture(settings: Settings) -> None:
    content = _sized(8192, "- an outdated line")
    scene = make_scene(settings, content=content)
    result = scene.capture(admit(scene), "- an outdated line", 1, op="remove")
    assert (result.outcome, result.version) == (Outcome.COMMITTED, 2), result


def test_an_oversized_head_refuses_even_a_remove_that_would_shorten_it(settings: Settings) -> None:
    """Oversized memory is refused until a human shortens it, even by an edit that would bring it under."""
    content = _sized(8193, "- an outdated line")
    assert len(apply_edits(content, [RemoveEdit(line="- an outdated line")]).text) <= 8192
    scene = make_scene(settings, content=content)
    before = stored_head(scene)
    result = scene.capture(admit(scene), "- an outdated line", 1, op="remove")
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.OVERSIZED)
    assert stored_head(scene) == before


# -- applying a proposal while a Clear lands ------------------------------------------------------------


@pytest.mark.parametrize("policy_row", [False, True], ids=["no policy row", "policy row"])
def test_a_clear_between_reading_and_applying_a_proposal_refuses_it(settings: Settings, policy_row: bool) -> None:
    """The Clear also moves the head, so the write fails either way; the generation condition is what makes
    it `PROPOSAL_CLEARED` (do not re-apply) rather than `STALE_BASE_VERSION` (re-read and try again)."""
    scene = make_scene(settings, mode=Mode.READ_ONLY)
    if policy_row:
        scene.set_mode(Mode.READ_ONLY)
    assert (scene.svc.table.get(*keys.policy(scene.ws)) is not None) is policy_row
    proposal = scene.capture(admit(scene), LINE, 1).proposal
    assert proposal is not None
    assert proposal.clear_generation == 0
    table = Interleaved(scene.svc.table, before_write=lambda: scene.svc.document.clear(scene.owner, scene.ws, 1))
    service = CaptureService(table, scene.svc.cipher, scene.clock)
    with pytest.raises(ProposalCleared):
        service.apply_proposal(scene.owner, scene.ws, proposal.edits, proposal.clear_generation, 1)
    assert table.transactions == 1
    assert scene.head() == (2, "")
    assert version_numbers(scene) == [2, 1]
    assert scene.svc.policy.get(scene.owner, scene.ws).clear_generation == 1


def test_a_proposal_stamped_after_a_clear_applies(settings: Settings) -> None:
    """With a policy row at generation 1, a proposal of generation 1 is current: it commits as the user's Save."""
    scene = make_scene(settings, mode=Mode.READ_ONLY)
    scene.svc.document.clear(scene.owner, scene.ws, 1)
    assert scene.svc.policy.get(scene.owner, scene.ws).clear_generation == 1
    proposal = scene.capture(admit(scene), LINE, 2).proposal
    assert proposal is not None
    assert (proposal.base_version, proposal.clear_generation) == (2, 1)
    commit = scene.svc.capture.apply_proposal(scene.owner, scene.ws, proposal.edits, 1, 2)
    assert (commit.version.version, commit.version.op, commit.version.author) == (3, "save", scene.owner)
    assert scene.head() == (3, LINE + "\n")
    latest = scene.svc.document.history(scene.owner, scene.ws, 1, None).versions[0]
    assert (latest.version, latest.author) == (3, scene.owner)


def test_a_save_between_reading_and_applying_a_proposal_is_a_stale_base(settings: Settings) -> None:
    """No Clear, so not PROPOSAL_CLEARED: the caller is told the head it lost to, and nothing is written."""
    scene = make_scene(settings, mode=Mode.READ_ONLY)
    proposal = scene.capture(admit(scene), LINE, 1).proposal
    assert proposal is not None
    table = Interleaved(scene.svc.table, before_write=lambda: _human_save(scene, admit(scene)))
    service = CaptureService(table, scene.svc.cipher, scene.clock)
    with pytest.raises(StaleBaseVersion) as raised:
        service.apply_proposal(scene.owner, scene.ws, proposal.edits, 0, 1)
    assert raised.value.details == {"current_version": 2}
    assert scene.head() == (2, DOC + "- a human line\n")
    assert version_numbers(scene) == [2, 1]


# -- Save's head condition --------------------------------------------------------------------------------


def test_save_with_a_base_ahead_of_the_head_writes_nothing(settings: Settings) -> None:
    scene = make_scene(settings)
    before = stored_head(scene)
    with pytest.raises(StaleBaseVersion) as raised:
        scene.svc.document.save(scene.owner, scene.ws, "from the future", 2)
    assert raised.value.details == {"current_version": 1}
    assert stored_head(scene) == before
    assert version_numbers(scene) == [1]
    assert scene.svc.table.get(*keys.version(scene.ws, 3)) is None


def test_save_on_a_tombstoned_head_writes_nothing(settings: Settings) -> None:
    scene = make_scene(settings)
    head = scene.svc.table.get(*keys.head(scene.ws))
    assert head is not None
    scene.svc.table.put({**head, "tombstone": True})
    documents = DocumentService(scene.svc.table, scene.svc.cipher, scene.clock)
    with pytest.raises(WorkspaceNotFound):  # a deleted workspace's head: the 404 of every route, not a 409
        documents.save(scene.owner, scene.ws, "over the grave", 1)
    after = scene.svc.table.get(*keys.head(scene.ws))
    assert after == {**head, "tombstone": True}
    assert scene.svc.table.get(*keys.version(scene.ws, 2)) is None


# -- admission identity ----------------------------------------------------------------------------------


def test_a_resend_by_another_user_does_not_hand_over_the_admission(settings: Settings) -> None:
    """Same conversation, same idempotency key, another member: refused, never the first user's credential.

    Once conversations belong to their first admission's user (docs/architecture.md#ownership-and-identical-404s), the
    conversation's 404 answers before the idempotency marker is read (and the marker's user check becomes defense in
    depth); either way nothing of the first admission comes back."""
    scene = make_scene(settings)
    other = f"editor-{uuid.uuid4().hex[:8]}"
    add_member(scene, other, Role.EDITOR)
    conv, key = f"conv-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    first = scene.admit(
        conv, key=key, key_session=scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, ALL_SCOPES).id
    )
    with pytest.raises((IdempotencyKeyReused, NotFound)):
        scene.admit(
            conv, key=key, user=other, key_session=scene.svc.key_sessions.open(other, scene.ws, 3600, ALL_SCOPES).id
        )
    slot = scene.svc.table.get(*keys.credential(conv))
    assert slot is not None
    assert slot["admissionId"] == first.admission.id


def test_a_resend_into_another_workspace_does_not_hand_over_the_admission(settings: Settings) -> None:
    scene = make_scene(settings)
    second = scene.svc.access.create_workspace(scene.owner, "second", ShareType.SHARED)
    scene.svc.access.set_ai(scene.owner, second, True)
    conv, key = f"conv-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    first = scene.admit(
        conv, key=key, key_session=scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, ALL_SCOPES).id
    )
    with pytest.raises((IdempotencyKeyReused, ConversationBound)):  # the latter once conversations have owners
        scene.svc.admission.admit(
            AdmissionRequest(
                conversation_id=conv,
                workspace_id=second,
                user_id=scene.owner,
                idempotency_key=key,
                key_session_id=scene.svc.key_sessions.open(scene.owner, second, 3600, ALL_SCOPES).id,
            )
        )
    slot = scene.svc.table.get(*keys.credential(conv))
    assert slot is not None
    assert (slot["admissionId"], slot["workspaceId"]) == (first.admission.id, scene.ws)


def test_an_admission_under_another_users_key_session_is_refused(settings: Settings) -> None:
    scene = make_scene(settings)
    other = f"editor-{uuid.uuid4().hex[:8]}"
    add_member(scene, other, Role.EDITOR)
    owners_session = scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, ALL_SCOPES)
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    with pytest.raises(KeySessionInvalid):
        scene.admit(conv, user=other, key_session=owners_session.id)
    assert scene.svc.table.get(*keys.credential(conv)) is None


@pytest.mark.parametrize("state", ["revoked", "expired", "expiring this instant", "unknown"])
def test_an_admission_under_a_dead_key_session_is_refused(settings: Settings, state: str) -> None:
    scene = make_scene(settings)
    session = scene.svc.key_sessions.open(scene.owner, scene.ws, 60, ALL_SCOPES)
    session_id = session.id
    if state == "revoked":
        scene.svc.key_sessions.revoke(scene.owner, scene.ws, session.id)
    elif state == "expired":
        scene.clock.advance(61)
    elif state == "expiring this instant":
        stored = scene.svc.table.get(*keys.key_session(scene.ws, session.id))
        assert stored is not None
        scene.clock.advance(stored["expiresAt"] - scene.clock.now())
        assert scene.clock.now() == stored["expiresAt"]
    else:
        session_id = "ks_never_opened"
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    with pytest.raises(KeySessionInvalid):
        scene.admit(conv, key_session=session_id)
    assert scene.svc.table.get(*keys.credential(conv)) is None
