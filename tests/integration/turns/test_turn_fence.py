"""Turns against a changing world: a competing event that lands while a turn is running retires its later
capture; notes persisted mid-turn survive a turn that then fails or is cancelled."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from temporalio.client import WorkflowFailureError

from tests.integration.fence_support import DOC, Scene, make_scene
from tests.integration.turn_support import (
    codec_client,
    queued_turns,
    result,
    run,
    running_worker,
    start_queued,
    worker_settings,
)
from workflows.providers import ModelError, ModelRequest, ModelResponse
from workflows.providers.scripted import ScriptedProvider
from workspace_memory.document.policy import Mode
from workspace_memory.kernel.settings import Settings
from workspace_memory.workspaces.keysessions import ALL_SCOPES

pytestmark = pytest.mark.integration

LINE = "- remembered during the turn"


EVENTS: dict[str, tuple[str, Callable[[Scene, str | None], object]]] = {
    "clear": ("policy", lambda s, _: s.svc.document.clear(s.owner, s.ws, 1)),
    "mode change": ("policy", lambda s, _: s.set_mode(Mode.READ_ONLY)),
    "revocation": ("key_session", lambda s, ks: s.svc.key_sessions.revoke(s.owner, s.ws, ks or "")),
}


@pytest.mark.parametrize("event", list(EVENTS))
def test_event_while_a_turn_runs_refuses_its_capture(settings: Settings, gateway_url: str, event: str) -> None:
    predicate, land = EVENTS[event]
    scene = make_scene(settings)
    queue = f"q-{uuid.uuid4().hex[:8]}"
    key_session = (
        scene.svc.key_sessions.open(scene.owner, scene.ws, 3600, ALL_SCOPES).id if event == "revocation" else None
    )
    _, turn_id = start_queued(scene, settings, queue, f"remember: {LINE}", key_session_id=key_session)
    land(scene, key_session)
    before = scene.head()

    wsettings = worker_settings(settings, gateway_url, queue)
    with running_worker(wsettings):
        view = result(wsettings, scene, turn_id)

    assert [(o.outcome, o.predicate) for o in view.tool_outcomes] == [("refused", predicate)]
    assert view.answer is not None
    assert f"the memory fence refused the edit ({predicate})" in view.answer  # the model was told
    assert scene.head() == before  # the document is untouched
    assert LINE not in scene.head()[1]


class FailsAfterATool:
    """Scripted, until a tool has run in this turn; then the model fails (retryable or not)."""

    def __init__(self, retryable: bool) -> None:
        self._retryable = retryable
        self._scripted = ScriptedProvider()

    def complete(self, request: ModelRequest) -> ModelResponse:
        if any(m.role == "tool" for m in request.messages):
            raise ModelError("injected model failure", retryable=self._retryable)
        return self._scripted.complete(request)


def _turn_with_note(scene: Scene, settings: Settings, queue: str, session: str, note: str) -> tuple[str, str]:
    return start_queued(scene, settings, queue, f"note: {note}", session_id=session)


def test_a_note_persisted_mid_turn_survives_the_turn_failing(settings: Settings, gateway_url: str) -> None:
    scene = make_scene(settings, content=DOC)
    queue, session, note = f"q-{uuid.uuid4().hex[:8]}", f"s-{uuid.uuid4().hex[:8]}", f"keep {uuid.uuid4().hex}"
    conv, turn_id = _turn_with_note(scene, settings, queue, session, note)
    wsettings = worker_settings(settings, gateway_url, queue)
    with running_worker(wsettings, FailsAfterATool(retryable=False)):
        with pytest.raises(WorkflowFailureError):
            result(wsettings, scene, turn_id)
        view = queued_turns(scene, settings, queue).view(scene.owner, conv, turn_id)  # a query needs a worker
    assert view.status == "failed"
    assert scene.svc.notes.get(scene.notebook(session)).text == note


def test_a_note_persisted_mid_turn_survives_cancellation(settings: Settings, gateway_url: str) -> None:
    scene = make_scene(settings, content=DOC)
    queue, session, note = f"q-{uuid.uuid4().hex[:8]}", f"s-{uuid.uuid4().hex[:8]}", f"keep {uuid.uuid4().hex}"
    _, turn_id = _turn_with_note(scene, settings, queue, session, note)
    wsettings = worker_settings(settings, gateway_url, queue)
    notebook = scene.notebook(session)

    async def cancel_once_the_note_is_written() -> None:
        client = await codec_client(wsettings, scene.svc.cipher)
        handle = client.get_workflow_handle(turn_id)
        async for event in handle.fetch_history_events(wait_new_event=True):
            # The tool activity completed: the note is persisted; the model now fails and is retried.
            if event.HasField("activity_task_completed_event_attributes") and scene.svc.notes.get(notebook).revision:
                break
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()

    with running_worker(wsettings, FailsAfterATool(retryable=True)):
        run(cancel_once_the_note_is_written())
    assert scene.svc.notes.get(notebook).text == note
