"""An agent entry write's answer is part of its commit (issue 21, Wuu's operation ids), on the moto server: the
process is made to die the moment the write's one transaction comes back, before it can do anything else, and a
retry under the same `Idempotency-Key` still answers every id the first commit stored, and the same stored
state. Before, the answer was a second write after the commit, and a crash between the two left a retry with
the outcome alone: no entry id, no revision, no candidate to follow up."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.entries.test_entry_fence_matrix import (
    EDITOR,
    _admitted,
    _owners_entry,
    _scene,
    entry_items,
    forget,
    save,
)
from tests.integration.fence_support import Scene
from workspace_memory.document.policy import Mode
from workspace_memory.entries.agent_results import SaveResult
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import Outcome
from workspace_memory.turns.admission import Admitted

pytestmark = pytest.mark.integration


class ProcessDied(Exception):
    """What the caller sees of a process killed right after its transaction reached DynamoDB."""


def die_after_the_write(scene: Scene) -> list[bool]:
    """The first `TransactWriteItems` that creates an idempotency marker and commits raises instead of
    returning, as a process killed at that moment would: nothing after the commit runs. The list gains an element
    when that happened."""
    died: list[bool] = []
    pending: list[bool] = []

    def sent(params: Any, **_: Any) -> None:
        pending[:] = [True] if "ENTRYSAVE#" in str(params) else []

    def returned(parsed: dict[str, Any], **_: Any) -> None:
        if pending and not died and "Error" not in parsed:  # a cancelled transaction is not the commit
            died.append(True)
            raise ProcessDied

    events = scene.svc.clients.dynamodb.meta.events
    tag = uuid.uuid4().hex
    events.register("provide-client-params.dynamodb.TransactWriteItems", sent, unique_id=f"sent-{tag}")
    events.register("after-call.dynamodb.TransactWriteItems", returned, unique_id=f"returned-{tag}")
    return died


KEY = "style/replies"


def _nothing(scene: Scene, admitted: Admitted) -> None:
    pass


def _key_in_use(scene: Scene, admitted: Admitted) -> None:
    assert save(scene, admitted, idem="first", key=KEY).outcome is Outcome.COMMITTED


def _save_new(scene: Scene, admitted: Admitted) -> SaveResult:
    return save(scene, admitted, idem="crash-1")


def _save_over_key(scene: Scene, admitted: Admitted) -> SaveResult:
    return save(scene, admitted, idem="crash-1", key=KEY, summary="Short replies, British spelling.")


Step = Callable[[Scene, Admitted], Any]
WRITES: dict[str, tuple[Mode, Step, Callable[[Scene, Admitted], SaveResult]]] = {
    "save": (Mode.AUTO, _nothing, _save_new),
    "save over a key": (Mode.AUTO, _key_in_use, _save_over_key),
    "proposal": (Mode.READ_ONLY, _nothing, _save_new),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_save_whose_process_died_after_its_commit_replays_every_id(settings: Settings, write: str) -> None:
    mode, prepare, attempt = WRITES[write]
    scene = _scene(settings, mode)
    admitted = _admitted(scene)
    prepare(scene, admitted)
    died = die_after_the_write(scene)
    with pytest.raises(ProcessDied):
        attempt(scene, admitted)
    assert died
    stored = entry_items(scene)

    again = attempt(scene, admitted)

    assert again.replayed
    assert entry_items(scene) == stored  # the retry wrote nothing
    if mode is Mode.READ_ONLY:
        pending = scene.svc.entries.candidates(EDITOR, scene.ws, 10, None)[0]
        assert [(again.outcome, again.candidate_id)] == [(Outcome.PROPOSAL, c.candidate_id) for c in pending]
        return
    assert (again.outcome, again.superseded) == (Outcome.COMMITTED, write == "save over a key")
    assert again.entry_id is not None
    view = scene.svc.entries.read(EDITOR, scene.ws, again.entry_id)
    over = write == "save over a key"
    summary = "Short replies, British spelling." if over else "Short replies in British English."
    assert (view.revision, view.text.summary) == (again.revision, summary)
    assert again.revision == (2 if over else 1)


def test_a_forget_proposal_whose_process_died_after_its_commit_replays_its_candidate(settings: Settings) -> None:
    scene = _scene(settings)
    entry_id = _owners_entry(scene)
    admitted = _admitted(scene)
    died = die_after_the_write(scene)
    with pytest.raises(ProcessDied):
        forget(scene, admitted, entry_id, "crash-1")
    assert died
    stored = entry_items(scene)

    again = forget(scene, admitted, entry_id, "crash-1")

    pending = scene.svc.entries.candidates(scene.owner, scene.ws, 10, None)[0]
    assert again.replayed
    assert (again.outcome, again.entry_id, again.candidate_id) == (
        Outcome.PROPOSAL,
        entry_id,
        pending[0].candidate_id,
    )
    assert len(pending) == 1
    assert entry_items(scene) == stored
