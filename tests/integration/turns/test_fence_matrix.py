"""The fence matrix: each competing event landing before a capture refuses it with the right predicate and
leaves the document byte-identical; landing after, the capture is committed and the event sees it done."""

from __future__ import annotations

import pytest

from tests.integration.fence_support import DOC, Event, Scene, clear_document, make_scene
from workspace_memory.api.models.automation import ProposalOut
from workspace_memory.document.policy import Mode
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.turns.admission import Admitted
from workspace_memory.turns.authority import Predicate
from workspace_memory.turns.capture import Outcome
from workspace_memory.workspaces.keysessions import ALL_SCOPES

pytestmark = pytest.mark.integration

LINE = "- captured by the agent"


def _human_save(scene: Scene, _: Admitted) -> None:
    version, text = scene.head()
    scene.svc.document.save(scene.owner, scene.ws, text + "- a human line\n", version)


def _newer_admission(scene: Scene, admitted: Admitted) -> None:
    scene.admit(admitted.admission.conversation_id)


def _revoke(scene: Scene, admitted: Admitted) -> None:
    assert admitted.admission.key_session_id is not None
    scene.svc.key_sessions.revoke(scene.owner, scene.ws, admitted.admission.key_session_id)


def _expire(scene: Scene, _: Admitted) -> None:
    scene.clock.advance(15 * 60 + 1)


def _consume(scene: Scene, admitted: Admitted) -> None:
    version, _text = scene.head()
    first = scene.capture(admitted, "- an earlier capture of this turn", version)
    assert first.outcome is Outcome.COMMITTED


EVENTS = [
    Event("clear", Predicate.POLICY, clear_document),
    Event("mode read_only", Predicate.POLICY, lambda s, _: s.set_mode(Mode.READ_ONLY)),
    Event("mode off", Predicate.POLICY, lambda s, _: s.set_mode(Mode.OFF)),
    Event("mode auto to auto", Predicate.POLICY, lambda s, _: s.set_mode(Mode.AUTO)),
    Event("ai disabled", Predicate.CONSENT, lambda s, _: s.svc.access.set_ai(s.owner, s.ws, False)),
    Event("consent bumped", Predicate.CONSENT, lambda s, _: s.svc.access.set_ai(s.owner, s.ws, True)),
    Event("newer admission", Predicate.CREDENTIAL, _newer_admission),
    Event("key session revoked", Predicate.KEY_SESSION, _revoke, needs_key_session=True),
    Event("admission expired", Predicate.ADMISSION, _expire),
    Event("admission consumed", Predicate.ADMISSION, _consume),
    Event("human save", Predicate.HEAD, _human_save),
]


def _stored(scene: Scene) -> tuple[int, str, bytes]:
    head = scene.svc.table.get(*keys.head(scene.ws))
    assert head is not None
    return head["headVersion"], head["sha256"], head["ciphertext"]


def _admit(scene: Scene, event: Event) -> Admitted:
    if not event.needs_key_session:
        return scene.admit()
    session = scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, ALL_SCOPES)
    return scene.admit(key_session=session.id)


@pytest.mark.parametrize("event", EVENTS, ids=[e.name for e in EVENTS])
def test_event_before_capture_refuses_it(settings: Settings, event: Event) -> None:
    scene = make_scene(settings)
    admitted = _admit(scene, event)
    event.land(scene, admitted)
    before = _stored(scene)
    text_before = scene.head()[1]

    result = scene.capture(admitted, LINE, 1)

    assert result.predicate is event.predicate, result
    expected = Outcome.CONFLICT if event.predicate is Predicate.HEAD else Outcome.REFUSED
    assert result.outcome is expected
    assert _stored(scene) == before
    assert scene.head()[1] == text_before
    assert LINE not in scene.head()[1]


@pytest.mark.parametrize("event", EVENTS, ids=[e.name for e in EVENTS])
def test_event_after_capture_sees_it_done(settings: Settings, event: Event) -> None:
    scene = make_scene(settings)
    admitted = _admit(scene, event)

    result = scene.capture(admitted, LINE, 1)
    assert result.outcome is Outcome.COMMITTED, result
    assert result.version == 2
    assert scene.head() == (2, DOC + LINE + "\n")

    if event.name == "admission consumed":
        again = scene.capture(admitted, "- a second logical capture", 2)
        assert (again.outcome, again.predicate) == (Outcome.REFUSED, Predicate.ADMISSION)
        assert scene.head()[0] == 2
        return
    event.land(scene, admitted)  # an event with a base version uses the head it reads: the capture's
    history = scene.svc.document.history(scene.owner, scene.ws, 10, None).versions
    assert [v.op for v in reversed(history)][:2] == ["save", "capture"]
    if event.name == "clear":
        assert scene.head() == (3, "")
    if event.name == "human save":
        assert scene.head()[1] == DOC + LINE + "\n- a human line\n"


def test_transport_retry_replays_the_receipt_without_a_new_version(settings: Settings) -> None:
    scene = make_scene(settings)
    admitted = scene.admit()
    first = scene.capture(admitted, LINE, 1)
    retry = scene.capture(admitted, LINE, 1)
    assert first.outcome is retry.outcome is Outcome.COMMITTED
    assert retry.replayed
    assert retry.receipt == first.receipt
    assert scene.head()[0] == 2
    different = scene.capture(admitted, "- a different body", 1)
    assert (different.outcome, different.predicate) == (Outcome.REFUSED, Predicate.ADMISSION)
    assert scene.head()[0] == 2


def test_read_only_returns_a_proposal_stamped_with_the_clear_generation(settings: Settings) -> None:
    scene = make_scene(settings, mode=Mode.READ_ONLY)
    admitted = scene.admit()
    result = scene.capture(admitted, LINE, 1)
    assert result.outcome is Outcome.PROPOSAL
    assert result.proposal is not None
    assert ProposalOut.of(result.proposal).wire() == {
        "edits": [{"op": "add", "line": LINE}],
        "baseVersion": 1,
        "clearGeneration": 0,
    }
    assert scene.head() == (1, DOC)

    commit = scene.svc.capture.apply_proposal(scene.owner, scene.ws, result.proposal.edits, 0, 1)
    assert commit.version.version == 2
    assert scene.head() == (2, DOC + LINE + "\n")


def test_a_proposal_made_before_a_clear_is_refused(settings: Settings) -> None:
    from workspace_memory.turns.capture import ProposalCleared

    scene = make_scene(settings, mode=Mode.READ_ONLY)
    result = scene.capture(scene.admit(), LINE, 1)
    assert result.proposal is not None
    scene.svc.document.clear(scene.owner, scene.ws, 1)
    with pytest.raises(ProposalCleared):
        scene.svc.capture.apply_proposal(scene.owner, scene.ws, result.proposal.edits, 0, 2)
    assert scene.head() == (2, "")


def test_off_does_nothing(settings: Settings) -> None:
    scene = make_scene(settings, mode=Mode.OFF)
    result = scene.capture(scene.admit(), LINE, 1)
    assert result.outcome is Outcome.NOOP
    assert scene.head() == (1, DOC)


def test_conflict_returns_the_change_as_a_proposal_against_the_newer_text(settings: Settings) -> None:
    scene = make_scene(settings)
    admitted = scene.admit()
    _human_save(scene, admitted)
    result = scene.capture(admitted, LINE, 1)
    assert (result.outcome, result.predicate, result.version) == (Outcome.CONFLICT, Predicate.HEAD, 2)
    assert result.proposal is not None
    assert result.proposal.base_version == 2
    assert scene.head() == (2, DOC + "- a human line\n")


def test_oversized_head_refuses_capture(settings: Settings) -> None:
    scene = make_scene(settings, content="x" * 8193)
    result = scene.capture(scene.admit(), LINE, 1)
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.OVERSIZED)
    assert scene.head()[0] == 1


def test_capture_that_would_exceed_the_recall_bound_is_refused(settings: Settings) -> None:
    scene = make_scene(settings, content="x" * 8180 + "\n")
    result = scene.capture(scene.admit(), "- this line pushes it over", 1)
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.OVERSIZED)
    assert scene.head()[0] == 1


def test_add_already_present_is_a_noop(settings: Settings) -> None:
    scene = make_scene(settings)
    result = scene.capture(scene.admit(), "- first fact", 1)
    assert (result.outcome, result.version) == (Outcome.NOOP, 1)
    assert scene.head() == (1, DOC)
