"""A worker killed mid-turn, after its capture committed but before the activity reported back: a new
worker finishes the turn once, and the retried capture replays its receipt - one version, not two."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.fence_support import DOC, make_scene
from tests.integration.turn_support import result, running_worker, start_queued, worker_settings
from tests.integration.worker_support import holding_proxy, start_worker_process
from workspace_memory.settings import Settings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LINE = "- remembered exactly once"


def test_worker_killed_after_capture_commits_finishes_once(
    settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    scene = make_scene(settings)
    queue = f"q-crash-{uuid.uuid4().hex[:8]}"
    committed, release = threading.Event(), threading.Event()
    _, turn_id = start_queued(scene, settings, queue, f"remember: {LINE}\nWhat do you remember?")

    def capture(method: str, path: str) -> bool:
        return method == "PUT" and "/v1/automation/workspaces/" in path

    with holding_proxy(gateway_url, capture, committed, release) as proxy:
        doomed = start_worker_process(resources, settings, proxy, queue)
        try:
            assert committed.wait(timeout=120), "the capture never reached the gateway"
            assert scene.head() == (2, DOC + LINE + "\n")  # committed upstream; the worker hasn't heard
        finally:
            doomed.kill()
            doomed.wait(timeout=30)
        release.set()
        survivor = worker_settings(settings, proxy, queue)
        with running_worker(survivor):
            view = result(survivor, scene, turn_id)

    assert view.status == "completed"
    assert [(o.tool, o.outcome, o.version) for o in view.tool_outcomes] == [("remember_in_memory", "committed", 2)]
    assert view.answer is not None
    assert LINE in view.answer
    history = scene.svc.document.history(scene.owner, scene.ws, 10, None).versions
    assert [v.op for v in history] == ["capture", "save"]  # one capture, not two
    assert scene.head() == (2, DOC + LINE + "\n")
