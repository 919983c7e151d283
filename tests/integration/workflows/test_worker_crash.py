"""A worker process SIGKILLed mid-turn: another worker, already polling, finishes the turn, once.

Killed after its capture committed but before the activity reported back, the retried capture replays its
receipt (one version, not two). Killed inside a model round, the round runs again on the other worker as soon
as the dead one's heartbeats stop (`workflows.liveness`), not after the round's start-to-close timeout. Each
test prints the seconds from the kill to the turn's end (`-s` shows them); no test asserts a time.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from temporalio.api.enums.v1 import TimeoutType

from scripts.localstack.resources import LocalResources
from tests.integration.fence_support import DOC, Scene, make_scene
from tests.integration.turn_support import plain_client, result, run, running_worker, start_queued, worker_settings
from tests.integration.worker_support import holding_proxy, start_worker_process
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.turn_contract import TurnView

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LINE = "- remembered exactly once"
MESSAGE = f"remember: {LINE}\nWhat do you remember?"
Held = Callable[[str, str], bool]


@dataclass(frozen=True)
class Recovery:
    turn_id: str
    view: TurnView


@pytest.fixture(scope="module", autouse=True)
def warm_worker(settings: Settings, gateway_url: str) -> Iterator[None]:
    """Starts and stops one in-process worker first: the first of a session takes ~10 s (imports, the workflow
    sandbox's checks), as long as the doomed worker's API read timeout, which a held answer would then run
    into, retrying the round on the doomed worker before the kill and adding its backoff to the figure."""
    with running_worker(worker_settings(settings, gateway_url, f"q-warm-{uuid.uuid4().hex[:8]}")):
        yield


def capture(method: str, path: str) -> bool:
    return method == "PUT" and "/v1/automation/workspaces/" in path


def recall(method: str, path: str) -> bool:
    return method == "GET" and "purpose=recall" in path


def killed_mid_turn(
    scene: Scene,
    settings: Settings,
    resources: LocalResources,
    gateway_url: str,
    hold: Held,
    while_held: Callable[[], None] = lambda: None,
) -> Recovery:
    """Runs the turn on a worker process until it makes a request `hold` picks (served upstream, its answer
    kept back); then a second worker starts polling, `while_held` runs, the first worker is SIGKILLed, and the
    turn is awaited."""
    queue = f"q-crash-{uuid.uuid4().hex[:8]}"
    held, release = threading.Event(), threading.Event()
    _, turn_id = start_queued(scene, settings, queue, MESSAGE)
    with holding_proxy(gateway_url, hold, held, release) as proxy:
        doomed = start_worker_process(resources, settings, proxy, queue)
        try:
            assert held.wait(timeout=120), "the worker never made the request to hold"
            survivor = worker_settings(settings, proxy, queue)
            with running_worker(survivor):
                while_held()
                killed = time.monotonic()
                doomed.kill()
                doomed.wait(timeout=30)
                release.set()  # the held answer goes nowhere: the worker that asked is dead
                view = result(survivor, scene, turn_id)
                seconds = time.monotonic() - killed
        finally:
            if doomed.poll() is None:
                doomed.kill()
                doomed.wait(timeout=30)
    print(f"\nrecovery: the turn ended {seconds:.1f} s after its worker was SIGKILLed")
    return Recovery(turn_id, view)


def retried_after(settings: Settings, turn_id: str) -> list[TimeoutType.ValueType]:
    """How each retried activity's previous attempt ended, when it timed out (the history keeps one started
    event per activity: its last attempt's, naming the failure before it)."""

    async def read() -> list[TimeoutType.ValueType]:
        handle = (await plain_client(settings)).get_workflow_handle(turn_id)
        started = [e.activity_task_started_event_attributes async for e in handle.fetch_history_events()]
        return [s.last_failure.timeout_failure_info.timeout_type for s in started if s.attempt > 1]

    return run(read())


def assert_remembered_once(scene: Scene, settings: Settings, recovery: Recovery) -> None:
    """The turn completed on the survivor, which took the dead worker's activity when its heartbeats stopped
    (not at its start-to-close timeout), and the document holds one capture."""
    assert retried_after(settings, recovery.turn_id) == [TimeoutType.TIMEOUT_TYPE_HEARTBEAT]
    view = recovery.view
    assert view.status == "completed"
    assert [(o.tool, o.outcome, o.version) for o in view.tool_outcomes] == [("remember_in_memory", "committed", 2)]
    assert view.answer is not None
    assert LINE in view.answer
    history = scene.svc.document.history(scene.owner, scene.ws, 10, None).versions
    assert [v.op for v in history] == ["capture", "save"]  # one capture, not two
    assert scene.head() == (2, DOC + LINE + "\n")


def test_worker_killed_after_capture_commits_finishes_once(
    settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    scene = make_scene(settings)

    def committed_unheard() -> None:
        assert scene.head() == (2, DOC + LINE + "\n")  # committed upstream; the worker hasn't heard

    assert_remembered_once(
        scene, settings, killed_mid_turn(scene, settings, resources, gateway_url, capture, committed_unheard)
    )


def test_worker_killed_in_a_model_round_resumes_on_another(
    settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    scene = make_scene(settings)
    recovery = killed_mid_turn(scene, settings, resources, gateway_url, recall)
    assert_remembered_once(scene, settings, recovery)
    assert recovery.view.rounds == 2  # round 1 ran again on the survivor; it counts once
