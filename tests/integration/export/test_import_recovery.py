"""An import interrupted on the real stack: a worker killed after the gateway applied the documents but before it
heard so leaves an import that another worker completes once, with the counts, the files and the audit of an
uninterrupted import of the same archive (each batch is recorded on the import in the transaction that writes
it, so the retried step applies nothing twice); and a run that ended without completing shows as `failed`
until the same archive, posted again, resumes it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.export.export_support import Scene, body, exported, populate, wait_for_import
from tests.integration.turn_support import codec_client, run, running_worker, worker_settings
from tests.integration.worker_support import nth_call, worker_killed_at
from tests.support import Api
from workspace_memory.adapters.temporal_imports import TemporalImports
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.workspaces.import_contract import import_workflow_id
from workspace_memory.workspaces.imports import ImportService

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def scene(api: Api) -> Scene:
    return populate(api)


def trail(api: Api, user: str, ws: str) -> list[tuple[str, str]]:
    """The import's audit events, oldest first: (op, actor)."""
    answer = api.call("GET", f"/v1/workspaces/{ws}/audit?limit=100&kind=import", user=user)
    assert answer.status_code == 200, answer.text
    return [(event["op"], event["actor"]) for event in reversed(body(answer)["events"])]


def test_an_import_interrupted_by_killing_the_worker_completes_once_with_the_same_result(
    api: Api,
    svc: Services,
    settings: Settings,
    resources: LocalResources,
    scene: Scene,
    gateway_url: str,
    worker: Settings,
) -> None:
    source: dict[str, Any] = exported(api, svc, settings, scene.owner, scene.ws)
    clean_target = api.workspace(scene.owner)
    started = api.call("POST", f"/v1/workspaces/{clean_target}/imports", user=scene.owner, json=source)
    assert started.status_code == 202, started.text
    clean = wait_for_import(settings, svc, body(started)["importId"])

    queue = f"q-import-crash-{uuid.uuid4().hex[:8]}"
    queued = settings.model_copy(update={"temporal_task_queue": queue})
    service = ImportService(svc.table, svc.cipher, svc.clock, TemporalImports(queued, svc.cipher))
    target = api.workspace(scene.owner)
    interrupted = service.request(scene.owner, target, source["manifest"], source["files"]).import_id
    third_file = nth_call(f"/imports/{interrupted}/files", 3)  # members, policy, then documents
    with worker_killed_at(resources, settings, gateway_url, queue, third_file):
        # The documents were applied upstream; the worker that asked never hears so.
        progress = service.progress(scene.owner, target, interrupted)
        assert (progress.status, progress.steps_applied) == ("running", 3)
    with running_worker(worker_settings(queued, gateway_url, queue)):
        result = wait_for_import(settings, svc, interrupted)
    assert (result.status, result.counts) == (clean.status, clean.counts) == ("completed", clean.counts)
    assert result.counts == {"versions": 2, "chains": 2, "revisions": 2, "members": 2}
    assert service.progress(scene.owner, target, interrupted).steps_applied == 4
    # Nothing was applied twice: the trail of the interrupted import is the clean one's, batch for batch.
    assert trail(api, scene.owner, target) == trail(api, scene.owner, clean_target)
    again = exported(api, svc, settings, scene.owner, target)
    assert again["files"] == source["files"]
    assert again["manifest"]["files"] == source["manifest"]["files"]


def test_an_import_whose_run_ended_shows_failed_and_resumes_when_posted_again(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    source: dict[str, Any] = exported(api, svc, settings, scene.owner, scene.ws)
    idle = settings.model_copy(update={"temporal_task_queue": f"q-import-idle-{uuid.uuid4().hex[:8]}"})
    target = api.workspace(scene.owner)
    started = ImportService(svc.table, svc.cipher, svc.clock, TemporalImports(idle, svc.cipher)).request(
        scene.owner, target, source["manifest"], source["files"]
    )  # on a queue no worker polls: the run waits, then is terminated, as an operator or a timeout would end it

    async def terminate() -> None:
        client = await codec_client(settings, svc.cipher)
        await client.get_workflow_handle(import_workflow_id(started.import_id)).terminate(reason="test")

    run(terminate())
    path = f"/v1/workspaces/{target}/imports/{started.import_id}"
    failed = api.call("GET", path, user=scene.owner)
    assert (failed.status_code, body(failed)["status"], body(failed)["stepsApplied"]) == (200, "failed", 0)
    closed = api.call("GET", f"/v1/workspaces/{target}/memory", user=scene.owner)
    assert (closed.status_code, body(closed)["error"]["code"]) == (409, "WORKSPACE_IMPORTING")

    again = api.call("POST", f"/v1/workspaces/{target}/imports", user=scene.owner, json=source)
    assert (again.status_code, body(again)["importId"], body(again)["status"]) == (202, started.import_id, "running")
    assert wait_for_import(settings, svc, started.import_id).status == "completed"
    assert body(api.call("GET", path, user=scene.owner))["status"] == "completed"
