"""The fence matrix of capture, repeated for `save_memory`: each competing event landing before an agent's
entry write refuses it with the event's predicate and writes nothing (every entry item of the workspace
scanned before and after); landing after, the write is committed and stays."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.fence_support import Event, Scene, add_member, clear_document, make_scene
from workspace_memory.document.edits import AddEdit
from workspace_memory.document.policy import Mode
from workspace_memory.document.retention import RetentionService
from workspace_memory.entries.agent_results import SaveResult
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.clock import DAY_SECONDS
from workspace_memory.kernel.errors import (
    IdempotencyKeyReused,
    QuoteNotInMessage,
    QuoteRequired,
    QuoteTooShort,
    RateLimited,
    RuleNotInQuote,
)
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType, Outcome
from workspace_memory.store import keys
from workspace_memory.store.changes import Delete
from workspace_memory.turns.admission import Admitted
from workspace_memory.turns.authority import Predicate
from workspace_memory.workspaces.access import Role
from workspace_memory.workspaces.keysessions import ALL_SCOPES

pytestmark = pytest.mark.integration

EDITOR = "editor-fence"
MESSAGE = "Please remember: always answer in British English. Keep replies short."


def _revoke(scene: Scene, admitted: Admitted) -> None:
    assert admitted.admission.key_session_id is not None
    scene.svc.key_sessions.revoke(EDITOR, scene.ws, admitted.admission.key_session_id)


def _expire_key_session(scene: Scene, _: Admitted) -> None:
    scene.clock.advance(61)  # the key session lives 60 s, the admission 15 min


def _remove_member(scene: Scene) -> None:
    """No service removes a member yet: the member item goes, as a removal would take it."""
    scene.svc.table.transact([Delete(keys.member(scene.ws, EDITOR))])


EVENTS = [
    Event("clear", Predicate.POLICY, clear_document),
    Event("mode read_only", Predicate.POLICY, lambda s, _: s.set_mode(Mode.READ_ONLY)),
    Event("mode off", Predicate.POLICY, lambda s, _: s.set_mode(Mode.OFF)),
    Event("mode auto to auto", Predicate.POLICY, lambda s, _: s.set_mode(Mode.AUTO)),
    Event("ai disabled", Predicate.CONSENT, lambda s, _: s.svc.access.set_ai(s.owner, s.ws, False)),
    Event("consent bumped", Predicate.CONSENT, lambda s, _: s.svc.access.set_ai(s.owner, s.ws, True)),
    Event("credential slot taken", Predicate.CREDENTIAL, lambda s, a: _admit(s, a.admission.conversation_id)),
    Event("key session revoked", Predicate.KEY_SESSION, _revoke, needs_key_session=True),
    Event("key session expired", Predicate.KEY_SESSION, _expire_key_session, needs_key_session=True),
    Event("admission expired", Predicate.ADMISSION, lambda s, _: s.clock.advance(15 * 60 + 1)),
    Event("member demoted", Predicate.ACCESS, lambda s, _: add_member(s, EDITOR, Role.VIEWER)),
    Event("member removed", Predicate.ACCESS, lambda s, _: _remove_member(s)),
]


def _admit(scene: Scene, conv: str | None = None, key_session: str | None = None) -> Admitted:
    """The editor's admission for a turn with `MESSAGE` (what a rule's quote is checked against)."""
    return scene.admit(conv, user=EDITOR, key_session=key_session, message=MESSAGE)


def _scene(settings: Settings, mode: Mode = Mode.AUTO) -> Scene:
    scene = make_scene(settings, mode=mode)
    add_member(scene, EDITOR, Role.EDITOR)
    return scene


def _admitted(scene: Scene, event: Event | None = None) -> Admitted:
    if event is None or not event.needs_key_session:
        return _admit(scene)
    session = scene.svc.key_sessions.open(EDITOR, scene.ws, 60, ALL_SCOPES)
    return _admit(scene, key_session=session.id)


def save(
    scene: Scene,
    admitted: Admitted,
    *,
    title: str = "Reply style",
    type: EntryType = EntryType.FACT,
    quote: str | None = None,
    key: str | None = None,
    idem: str = "save-1",
    scope: EntryScope = EntryScope.WORKSPACE,
    summary: str = "Short replies in British English.",
    body_text: str = "Body of the entry.",
) -> SaveResult:
    text = EntryText(title, summary, body_text, (), key)
    body: dict[str, Any] = {"type": type.value, "title": title, "key": key, "quote": quote, "scope": scope.value}
    adm = admitted.admission
    return scene.svc.agent_entries.save(
        scene.ws, adm.id, admitted.credential, Draft(type, text, scope), quote, body, idem
    )


def clear_after_the_snapshot(monkeypatch: pytest.MonkeyPatch, scene: Scene, admitted: Admitted) -> None:
    """The agent's write reads its authority snapshot, then a Clear lands, then the write is attempted: only the
    transaction's own re-statement of the predicates can refuse it."""
    import workspace_memory.entries.agent_entries as module
    from workspace_memory.turns.authority import read_authority

    def stale_snapshot(*args: Any) -> Any:
        snapshot = read_authority(*args)
        clear_document(scene, admitted)
        return snapshot

    monkeypatch.setattr(module, "read_authority", stale_snapshot)


def test_an_agent_window_changed_after_the_snapshot_stamps_the_new_expiry(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: an agent's memory expires `agentDays` after it is written, by the window its save read. A change of
    the window landing between that read and the commit fails the write's own transaction (the window is part of
    the fence's workspace check), and the save is judged again under the window in force: it never keeps the
    old expiry, which the window change could no longer rewrite (it ran before the write landed)."""
    import workspace_memory.entries.agent_entries as module
    from workspace_memory.turns.authority import read_authority

    scene = _scene(settings)
    admitted = _admit(scene)
    reads: list[Any] = []

    def stale_snapshot(*args: Any) -> Any:
        snapshot = read_authority(*args)
        if not reads:
            RetentionService(scene.svc.table, scene.clock).set_windows(scene.owner, scene.ws, None, 10)
        reads.append(snapshot)
        return snapshot

    monkeypatch.setattr(module, "read_authority", stale_snapshot)
    result = save(scene, admitted)

    assert result.outcome is Outcome.COMMITTED, result
    assert [r.agent_days for r in reads] == [90, 10]  # judged again under the window in force
    assert result.entry_id is not None
    for key in (keys.entry(scene.ws, result.entry_id), keys.entry_revision(scene.ws, result.entry_id, 1)):
        item = scene.svc.table.get(*key)
        assert item is not None
        assert item["ttl"] == int(scene.clock.now()) + 10 * DAY_SECONDS


def entry_items(scene: Scene) -> list[dict[str, Any]]:
    """Every entry item of the workspace (heads, revisions, key slots, counters, rate, idempotency)."""
    return scene.svc.table.query(keys.ws(scene.ws), "ENTRY", limit=1000, newest_first=False)


@pytest.mark.parametrize("event", EVENTS, ids=[e.name for e in EVENTS])
def test_event_before_save_refuses_it_and_writes_nothing(settings: Settings, event: Event) -> None:
    scene = _scene(settings)
    admitted = _admitted(scene, event)
    event.land(scene, admitted)
    before = entry_items(scene)

    result = save(scene, admitted)

    assert (result.outcome, result.predicate) == (Outcome.REFUSED, event.predicate), result
    assert result.entry_id is None
    assert entry_items(scene) == before


@pytest.mark.parametrize("event", EVENTS, ids=[e.name for e in EVENTS])
def test_event_after_save_sees_it_committed(settings: Settings, event: Event) -> None:
    scene = _scene(settings)
    admitted = _admitted(scene, event)

    result = save(scene, admitted)
    assert result.outcome is Outcome.COMMITTED, result
    assert result.entry_id is not None
    assert result.revision == 1
    event.land(scene, admitted)
    view = scene.svc.entries.read(scene.owner, scene.ws, result.entry_id)
    assert (view.author, view.author_kind, view.status) == (EDITOR, "agent", EntryStatus.ACTIVE)
    assert view.text.title == "Reply style"


def test_the_fence_itself_refuses_an_event_that_lands_after_the_snapshot(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The predicate checks before the write are only an early refusal: the transaction re-states them. Here
    the snapshot is read, then the Clear lands, then the write: the transaction alone refuses it."""
    scene = _scene(settings)
    admitted = _admitted(scene)
    before = entry_items(scene)
    clear_after_the_snapshot(monkeypatch, scene, admitted)
    result = save(scene, admitted)
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.POLICY)
    # the workspace's HMAC secret is made at the first agent write, before its transaction (its revision names
    # its turn by HMAC: decisions/0074), as at the first key: workspace bookkeeping, never the entry
    assert [i for i in entry_items(scene) if i["sk"] != "ENTRYSECRET"] == before


def test_several_saves_in_one_turn_and_after_its_capture(settings: Settings) -> None:
    scene = _scene(settings)
    admitted = _admitted(scene)
    first = save(scene, admitted, title="First", idem="a")
    adm = admitted.admission
    captured = scene.svc.capture.capture(
        scene.ws, adm.id, admitted.credential, [AddEdit(line="- x")], 1, f"memory:{adm.id}"
    )
    assert captured.outcome is Outcome.COMMITTED
    second = save(scene, admitted, title="Second", idem="b")
    assert first.outcome is second.outcome is Outcome.COMMITTED
    assert first.entry_id != second.entry_id


def test_a_replay_answers_the_first_save_and_a_different_body_is_refused(settings: Settings) -> None:
    scene = _scene(settings)
    admitted = _admitted(scene)
    first = save(scene, admitted)
    again = save(scene, admitted)
    assert again.replayed
    assert (again.entry_id, again.revision, again.outcome) == (first.entry_id, first.revision, first.outcome)
    before = entry_items(scene)
    with pytest.raises(IdempotencyKeyReused):
        save(scene, admitted, title="Another title")
    assert entry_items(scene) == before


def test_read_only_makes_a_candidate_and_off_nothing(settings: Settings) -> None:
    scene = _scene(settings, Mode.READ_ONLY)
    result = save(scene, _admitted(scene))
    assert result.outcome is Outcome.PROPOSAL
    assert result.candidate_id is not None
    views, _ = scene.svc.entries.candidates(EDITOR, scene.ws, 10, None)
    assert [v.candidate_id for v in views] == [result.candidate_id]
    assert scene.svc.entries.list_entries(EDITOR, scene.ws, _filters(), 10, None).rows == []

    off = _scene(settings, Mode.OFF)
    before = entry_items(off)
    assert save(off, _admitted(off)).outcome is Outcome.NOOP
    assert entry_items(off) == before


def _filters() -> Any:
    from workspace_memory.entries.model import Filters

    return Filters()


def rule(scene: Scene, admitted: Admitted, quote: str | None, idem: str, **fields: Any) -> SaveResult:
    """An agent's rule whose title and summary are words of `quote` (the body empty) unless `fields` say."""
    words = (quote or "British English").split()
    said: dict[str, Any] = {"title": " ".join(words[-2:]), "summary": quote or "British English", "body_text": ""}
    return save(scene, admitted, type=EntryType.RULE, quote=quote, idem=idem, **{**said, **fields})


def test_a_rule_needs_a_quote_of_the_turns_message_that_states_it(settings: Settings) -> None:
    scene = _scene(settings)
    admitted = _admitted(scene)
    before = entry_items(scene)
    with pytest.raises(QuoteRequired):
        rule(scene, admitted, None, "r1")
    with pytest.raises(QuoteNotInMessage):
        rule(scene, admitted, "always answer in American English", "r2")
    with pytest.raises(QuoteNotInMessage):  # whole words: "ways answer" is not what the user wrote
        rule(scene, admitted, "ways answer in British English", "r3")
    with pytest.raises(QuoteTooShort):
        rule(scene, admitted, "e", "r4", title="British English", summary="British English")
    with pytest.raises(RuleNotInQuote):
        rule(scene, admitted, "always answer in British English", "r5", body_text="and in French on Fridays")
    assert entry_items(scene) == before
    ok = rule(scene, admitted, "ALWAYS answer in British-English!", "r6", summary="Always answer in British English.")
    assert ok.outcome is Outcome.COMMITTED


def test_changing_a_rule_through_its_key_needs_the_quote_too(settings: Settings) -> None:
    scene = _scene(settings)
    admitted = _admitted(scene)
    quote = "keep replies short"
    saved = rule(scene, admitted, quote, "k1", key="style/length")
    assert saved.outcome is Outcome.COMMITTED
    before = entry_items(scene)
    with pytest.raises(QuoteRequired):
        save(scene, admitted, type=EntryType.FACT, key="style/length", idem="k2")
    with pytest.raises(RuleNotInQuote):  # the new revision says more than the quote
        save(scene, admitted, type=EntryType.FACT, key="style/length", quote=quote, idem="k3")
    assert entry_items(scene) == before
    changed = save(
        scene,
        admitted,
        type=EntryType.FACT,
        key="style/length",
        quote=quote,
        idem="k4",
        title="replies short",
        summary=quote,
        body_text="",
    )
    assert (changed.entry_id, changed.revision, changed.superseded) == (saved.entry_id, 2, True)


def test_the_121st_agent_write_in_the_hour_is_rate_limited(settings: Settings) -> None:
    scene = _scene(settings)
    admitted = _admitted(scene)
    scene.svc.entries.limits.agent_writes_per_hour = 3  # the cap's mechanism, at a size a test can reach
    try:
        for n in range(3):
            assert save(scene, admitted, idem=f"n{n}", title=f"T{n}").outcome is Outcome.COMMITTED
        before = entry_items(scene)
        with pytest.raises(RateLimited):
            save(scene, admitted, idem="n3", title="T3")
        assert entry_items(scene) == before
    finally:
        scene.svc.entries.limits.agent_writes_per_hour = 120


def test_agent_text_is_redacted_before_storage(settings: Settings) -> None:
    scene = _scene(settings)
    result = save(scene, _admitted(scene), title="Mail ann@example.com")
    assert result.entry_id is not None
    assert [f.kind.value for f in result.redactions] == ["email"]
    view = scene.svc.entries.read(scene.owner, scene.ws, result.entry_id)
    assert view.text.title == "Mail [redacted:email]"


# -- forget_memory: the same fence, always a proposal ----------------------------------------------------------


def forget(scene: Scene, admitted: Admitted, entry_id: str, idem: str = "forget-1") -> SaveResult:
    adm = admitted.admission
    return scene.svc.agent_entries.forget(scene.ws, adm.id, admitted.credential, entry_id, idem)


def _owners_entry(scene: Scene) -> str:
    return scene.svc.entries.create(scene.owner, scene.ws, Draft(EntryType.FACT, EntryText("Old", "old", ""))).entry_id


@pytest.mark.parametrize("event", EVENTS, ids=[e.name for e in EVENTS])
def test_event_before_a_forget_proposal_refuses_it_and_writes_nothing(settings: Settings, event: Event) -> None:
    scene = _scene(settings)
    entry_id = _owners_entry(scene)
    admitted = _admitted(scene, event)
    event.land(scene, admitted)
    before = entry_items(scene)

    result = forget(scene, admitted, entry_id)

    assert (result.outcome, result.predicate) == (Outcome.REFUSED, event.predicate), result
    assert result.candidate_id is None
    assert entry_items(scene) == before


def test_the_fence_itself_refuses_a_forget_proposal_when_a_clear_lands_after_the_snapshot(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = _scene(settings)
    entry_id = _owners_entry(scene)
    admitted = _admitted(scene)
    before = entry_items(scene)
    clear_after_the_snapshot(monkeypatch, scene, admitted)
    result = forget(scene, admitted, entry_id)
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.POLICY)
    assert entry_items(scene) == before


ACCESS_LOST = {e.name: e for e in EVENTS if e.predicate is Predicate.ACCESS}


@pytest.mark.parametrize(
    ("mode", "event"),
    [(Mode.AUTO, "member demoted"), (Mode.AUTO, "member removed"), (Mode.READ_ONLY, "member removed")],
    ids=["auto-member demoted", "auto-member removed", "read_only-member removed"],
)
def test_the_fence_itself_refuses_a_forget_proposal_when_the_member_loses_access_after_the_snapshot(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, mode: Mode, event: str
) -> None:
    """The proposal re-states at commit what its mode needs of the member: the write right in `auto`,
    membership in `read_only`. The snapshot is read, then the member loses it, then the proposal is written:
    only the transaction can refuse it."""
    scene = _scene(settings, mode)
    entry_id = _owners_entry(scene)
    admitted = _admitted(scene)
    before = entry_items(scene)
    import workspace_memory.entries.agent_entries as module
    from workspace_memory.turns.authority import read_authority

    def stale_snapshot(*args: Any) -> Any:
        snapshot = read_authority(*args)
        ACCESS_LOST[event].land(scene, admitted)
        return snapshot

    monkeypatch.setattr(module, "read_authority", stale_snapshot)
    result = forget(scene, admitted, entry_id)
    assert (result.outcome, result.predicate) == (Outcome.REFUSED, Predicate.ACCESS), result
    assert result.candidate_id is None
    assert entry_items(scene) == before


def test_a_forget_proposal_counts_against_the_agent_write_rate(settings: Settings) -> None:
    scene = _scene(settings)
    entry_id = _owners_entry(scene)
    admitted = _admitted(scene)
    scene.svc.entries.limits.agent_writes_per_hour = 2  # the cap's mechanism, at a size a test can reach
    try:
        assert save(scene, admitted, idem="s1").outcome is Outcome.COMMITTED
        assert forget(scene, admitted, entry_id, "f1").outcome is Outcome.PROPOSAL
        before = entry_items(scene)
        with pytest.raises(RateLimited):
            forget(scene, admitted, entry_id, "f2")
        assert entry_items(scene) == before
    finally:
        scene.svc.entries.limits.agent_writes_per_hour = 120


def test_an_idempotency_key_used_by_a_save_cannot_propose_a_forget(settings: Settings) -> None:
    scene = _scene(settings)
    entry_id = _owners_entry(scene)
    admitted = _admitted(scene)
    assert save(scene, admitted, idem="same").outcome is Outcome.COMMITTED
    before = entry_items(scene)
    with pytest.raises(IdempotencyKeyReused):
        forget(scene, admitted, entry_id, "same")
    assert entry_items(scene) == before
