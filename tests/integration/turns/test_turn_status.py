"""GET …/turns/{turnId} while no worker polls the turn's queue (all of them died, or none started yet): the
route reads the Temporal server's own record of the workflow, so it still answers, and answers right."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from tests.integration.fence_support import make_scene
from tests.integration.turn_support import plain_client, result, run, running_worker, start_queued, worker_settings
from tests.support import Api
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration


def test_the_turn_route_answers_without_a_worker(api: Api, settings: Settings, gateway_url: str) -> None:
    scene = make_scene(settings)
    queue = f"q-idle-{uuid.uuid4().hex[:8]}"  # no worker polls it yet
    conv, turn_id = start_queued(scene, settings, queue, "remember: - seen without a worker\nWhat now?")

    def status(conversation: str, turn: str) -> tuple[int, str]:
        response = api.call("GET", f"/v1/conversations/{conversation}/turns/{turn}", user=scene.owner)
        body = response.json()
        return response.status_code, body["status"] if response.status_code == 200 else body["error"]["code"]

    assert status(conv, turn_id) == (200, "running")
    # Another conversation of the same owner does not reach it, running or not.
    other_conv, stopped_id = start_queued(scene, settings, queue, "never run")
    assert status(other_conv, turn_id) == (404, "TURN_NOT_FOUND")

    async def terminate() -> None:
        client: Client = await plain_client(settings)
        await client.get_workflow_handle(stopped_id).terminate(reason="a test stops it before any worker came")

    run(terminate())
    assert status(other_conv, stopped_id) == (200, "failed")

    with running_worker(worker_settings(settings, gateway_url, queue)):  # a worker comes, finishes it, and goes
        done = result(settings, scene, turn_id)
    response = api.call("GET", f"/v1/conversations/{conv}/turns/{turn_id}", user=scene.owner)
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["status"], body["answer"], body["rounds"]) == ("completed", done.answer, 2)
    assert [(o["tool"], o["outcome"]) for o in body["toolOutcomes"]] == [("remember_in_memory", "committed")]
