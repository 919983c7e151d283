"""An export's life past the happy path, on the real stack: an archive nobody downloads is gone a day after its
request (the stack's clock pinned and moved, DynamoDB's TTL deleter simulated: no sleeps), and a worker killed
mid-export leaves an export that another worker completes once, with the manifest an uninterrupted export of
the same data has."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from scripts.localstack.local_clock import PinnedClock
from scripts.localstack.resources import LocalResources
from scripts.localstack.stack import LocalStack
from tests.integration.document.test_retention import run_ttl_deleter
from tests.integration.export.export_support import Scene, archive, body, populate, request, wait_for_export
from tests.integration.turn_support import running_worker, worker_settings
from tests.integration.worker_support import nth_call, worker_killed_at
from tests.support import Api
from workspace_memory.adapters.temporal_exports import TemporalExports
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.clock import DAY_SECONDS
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import ExportScope
from workspace_memory.store import keys
from workspace_memory.workspaces.exports import ExportService

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def scene(api: Api) -> Scene:
    return populate(api)


@pytest.fixture
def pinned_clock(gateway_url: str, local_stack: LocalStack) -> Iterator[PinnedClock]:
    with local_stack.pinned_clock(time.time()) as clock:
        yield clock


def test_an_archive_nobody_downloads_expires_a_day_after_its_request(
    api: Api,
    svc: Services,
    settings: Settings,
    resources: LocalResources,
    scene: Scene,
    worker: Settings,
    pinned_clock: PinnedClock,
) -> None:
    started = request(api, scene.editor, scene.ws, "me")
    assert started.status_code == 202, started.text
    export_id = body(started)["exportId"]
    assert wait_for_export(settings, svc, export_id).status == "ready"
    ours = (keys.export(scene.ws, export_id)[1], keys.export_parts_prefix(export_id))
    pinned_clock.advance(DAY_SECONDS - 1)
    assert [sk for sk in run_ttl_deleter(resources, scene.ws, pinned_clock.now()) if sk.startswith(ours)] == []
    pinned_clock.advance(1)  # 24 hours after the request: gone for every read, before the deleter has run
    gone = archive(api, scene.editor, scene.ws, export_id)
    assert (gone.status_code, body(gone)["error"]["code"]) == (404, "EXPORT_NOT_FOUND")
    progress = api.call("GET", f"/v1/workspaces/{scene.ws}/exports/{export_id}", user=scene.editor)
    assert progress.status_code == 404
    deleted = [sk for sk in run_ttl_deleter(resources, scene.ws, pinned_clock.now()) if sk.startswith(ours)]
    assert deleted[0] == keys.export(scene.ws, export_id)[1]
    assert len(deleted) == 1 + 5 + 1  # the export, one chunk per file, the manifest
    assert svc.table.get(*keys.export(scene.ws, export_id)) is None


def test_an_export_interrupted_by_killing_the_worker_completes_once_with_the_same_manifest(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, scene: Scene, gateway_url: str
) -> None:
    queue = f"q-export-crash-{uuid.uuid4().hex[:8]}"
    queued = settings.model_copy(update={"temporal_task_queue": queue})
    service = ExportService(svc.table, svc.cipher, svc.clock, TemporalExports(queued, svc.cipher))
    interrupted = service.request(scene.owner, scene.ws, ExportScope.WORKSPACE).export_id
    with worker_killed_at(resources, settings, gateway_url, queue, nth_call(f"/exports/{interrupted}/files", 3)):
        progress = service.progress(scene.owner, scene.ws, interrupted)
        assert (progress.status, progress.phase, progress.files_done) == ("running", "files", 2)
    with running_worker(worker_settings(queued, gateway_url, queue)):
        result = wait_for_export(settings, svc, interrupted)
        assert (result.status, result.files) == ("ready", 6)
        again = service.request(scene.owner, scene.ws, ExportScope.WORKSPACE).export_id
        assert wait_for_export(settings, svc, again).status == "ready"
    first, second = archive(api, scene.owner, scene.ws, interrupted), archive(api, scene.owner, scene.ws, again)
    assert (first.status_code, second.status_code) == (200, 200)
    assert body(first)["manifest"]["files"] == body(second)["manifest"]["files"]
    assert body(first)["files"] == body(second)["files"]
    done = service.progress(scene.owner, scene.ws, interrupted)
    assert (done.status, done.files_done, done.files_total) == ("downloaded", 6, 6)
