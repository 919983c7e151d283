"""What a run re-reads before it judges anything (docs/decisions/0086, 0088): a scheduled run of a workspace whose
owner has not opted in (or opted out after the schedule fired) judges nothing; a run of a workspace deleted since
it was asked for is refused, and leaves no record and no candidate."""

from __future__ import annotations

import uuid

import pytest

from tests.integration.consolidation.consolidation_support import candidates, partition, seeded
from tests.integration.export.export_support import workflow_result
from tests.integration.turn_support import codec_client, run
from tests.support import RUNTIME, Api
from workspace_memory.bootstrap import Services
from workspace_memory.consolidation.contract import (
    WORKFLOW_NAME,
    ConsolidationInput,
    ConsolidationResult,
    RunTrigger,
)
from workspace_memory.kernel.clock import iso
from workspace_memory.kernel.settings import Settings
from workspace_memory.store.changes import TombstoneWorkspace

pytestmark = pytest.mark.integration


def scheduled(settings: Settings, svc: Services, ws: str) -> ConsolidationResult:
    """A run as the workspace's schedule starts it: no run id of its own, trigger `schedule`."""
    workflow_id = f"scheduled-consolidation-{ws}-{uuid.uuid4().hex[:8]}"

    async def started() -> None:
        client = await codec_client(settings, svc.cipher)
        await client.start_workflow(
            WORKFLOW_NAME,
            ConsolidationInput(workspace_id=ws, trigger=RunTrigger.SCHEDULE),
            id=workflow_id,
            task_queue=settings.temporal_task_queue,
        )

    run(started())
    return workflow_result(settings, svc, workflow_id, ConsolidationResult)


def opt(api: Api, owner: str, ws: str, enabled: bool, revision: int) -> None:
    body = {"enabled": enabled, "autoFile": False, "expectedRevision": revision}
    put = api.call("PUT", f"/v1/workspaces/{ws}/consolidation", user=owner, json=body)
    assert put.status_code == 200, put.text


def test_a_scheduled_run_judges_nothing_unless_the_owner_opted_in(
    api: Api, svc: Services, settings: Settings, worker: Settings
) -> None:
    scene = seeded(api)
    skipped = scheduled(settings, svc, scene.ws)  # never opted in: as after an opt-out that raced the schedule
    assert (skipped.judged, skipped.proposed) == (0, 0)
    assert candidates(api, scene.owner, scene.ws) == []
    opt(api, scene.owner, scene.ws, True, 0)
    try:
        done = scheduled(settings, svc, scene.ws)  # the same run, opted in: the planted pairs are judged
        assert (done.judged, done.proposed) == (2, 2)
    finally:
        opt(api, scene.owner, scene.ws, False, 1)  # the nightly schedule removed again


def test_a_run_of_a_deleted_workspace_is_refused_and_leaves_nothing(api: Api, svc: Services) -> None:
    scene = seeded(api)
    # the tombstone as the deletion route writes it, without the purge that would sweep the partition after it
    svc.table.transact([TombstoneWorkspace(scene.ws, scene.owner, iso(svc.clock.now()))])
    before = partition(svc, scene.ws)
    path = f"/v1/automation/workspaces/{scene.ws}/consolidation/runs/cr_{uuid.uuid4().hex[:24]}/pairs"
    refused = api.call("POST", path, automation=RUNTIME, json={"trigger": "owner"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")
    assert partition(svc, scene.ws) == before  # no run record, no candidate
