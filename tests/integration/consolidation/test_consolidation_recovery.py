"""A consolidation run interrupted on the real stack: the worker is killed after the gateway made the run's
proposals but before the worker heard of it. Another worker resumes the run from its history: it completes once,
each proposal exists once, and the run's record counts them as its own."""

from __future__ import annotations

import uuid

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.consolidation.consolidation_support import candidates, partition, result, seeded, start
from tests.integration.turn_support import running_worker, worker_settings
from tests.integration.worker_support import nth_call, worker_killed_at
from tests.support import Api
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration


def test_a_run_whose_worker_is_killed_mid_run_completes_once_with_no_candidate_twice(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    scene = seeded(api)
    queue = f"q-consolidation-crash-{uuid.uuid4().hex[:8]}"
    run_id = start(settings, svc, scene.ws, queue)
    with worker_killed_at(resources, settings, gateway_url, queue, nth_call("/proposals", 1)):
        assert {c["kind"] for c in candidates(api, scene.owner, scene.ws)} == {"merge", "supersede"}
    with running_worker(worker_settings(settings, gateway_url, queue)):
        done = result(settings, svc, scene.ws, run_id)
    assert (done.run_id, done.judged, done.proposed, done.already_proposed) == (run_id, 2, 2, 0)
    stored = partition(svc, scene.ws, "ENTRYCAND#")
    assert len(stored) == 2
    assert {i["runId"] for i in stored} == {run_id}
    runs = api.call("GET", f"/v1/workspaces/{scene.ws}/consolidation/runs", user=scene.owner).json()["runs"]
    assert [(r["runId"], r["status"], r["counts"]["proposed"]) for r in runs] == [(run_id, "done", 2)]
