"""The owner's opt-in to nightly consolidation, its Temporal Schedule and a run on demand (issue 22;
docs/decisions/0088), end to end: the gateway and the built handlers, moto's DynamoDB, the Temporal dev
server. The schedule is read back from Temporal itself (`describe`), never from the setting.

No worker here runs the consolidation workflow (its own tests do): a run asked for is checked started, with
its type, id and input, and terminated at the end. Firing the schedule is checked by a stand-in registered
under the workflow's name on a queue of this test's own, whose one activity hands over what it was given:
the test waits for that, a real event, not for time to pass."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from temporalio import activity, workflow
from temporalio.client import (
    Client,
    ScheduleActionStartWorkflow,
    ScheduleDescription,
    ScheduleOverlapPolicy,
    WorkflowExecutionStatus,
)
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from tests.integration.turn_support import codec_client, run
from tests.support import Api, new_user
from workspace_memory.adapters.temporal_consolidation import TemporalConsolidation
from workspace_memory.bootstrap import Services
from workspace_memory.consolidation.contract import (
    NIGHTLY_CRON,
    WORKFLOW_NAME,
    ConsolidationInput,
    RunTrigger,
    consolidation_schedule_id,
    consolidation_workflow_id,
)
from workspace_memory.consolidation.control import ConsolidationControl
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import ShareType
from workspace_memory.store import keys
from workspace_memory.workspaces.deletion_contract import deletion_workflow_id

pytestmark = pytest.mark.integration

PATH = "/v1/workspaces/{ws}/consolidation"


def settings_of(api: Api, user: str, ws: str) -> requests.Response:
    return api.call("GET", PATH.format(ws=ws), user=user)


def put(api: Api, user: str, ws: str, enabled: bool, revision: int, **extra: Any) -> requests.Response:
    body = {"enabled": enabled, "expectedRevision": revision, **extra}
    return api.call("PUT", PATH.format(ws=ws), user=user, json=body)


def ask(api: Api, user: str, ws: str) -> requests.Response:
    return api.call("POST", PATH.format(ws=ws) + "/runs", user=user)


def described(settings: Settings, svc: Services, ws: str) -> tuple[ScheduleDescription, ConsolidationInput] | None:
    """The workspace's schedule as Temporal holds it, with its action's input decoded; None: there is none."""

    async def describe() -> tuple[ScheduleDescription, ConsolidationInput] | None:
        client = await codec_client(settings, svc.cipher)
        try:
            found = await client.get_schedule_handle(consolidation_schedule_id(ws)).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return None
            raise
        action = found.schedule.action
        assert isinstance(action, ScheduleActionStartWorkflow)
        (given,) = await client.data_converter.decode(action.args, [ConsolidationInput])
        return found, given

    return run(describe())


def audited(api: Api, owner: str, ws: str, kind: str) -> list[tuple[str, str, str]]:
    response = api.call("GET", f"/v1/workspaces/{ws}/audit?kind={kind}", user=owner)
    assert response.status_code == 200, response.text
    return [(e["op"], e["actor"], e["targets"][0]["id"]) for e in reversed(response.json()["events"])]


@pytest.fixture
def started(settings: Settings) -> Iterator[list[str]]:
    """Workflow ids a test started: terminated at its end, so nothing is left on the shared queue."""
    ids: list[str] = []
    yield ids

    async def terminate() -> None:
        client = await Client.connect(settings.temporal_address)
        for workflow_id in ids:
            with contextlib.suppress(RPCError):
                await client.get_workflow_handle(workflow_id).terminate(reason="test over")

    run(terminate())


SAW = "consolidation-stand-in-saw"


class Seen:
    """The stand-in's one activity: it hands the run it was started as (its workflow id, its input) over."""

    def __init__(self, seen: asyncio.Future[tuple[str, ConsolidationInput]]) -> None:
        self._seen = seen

    @activity.defn(name=SAW)
    async def saw(self, given: ConsolidationInput) -> None:
        if not self._seen.done():
            self._seen.set_result((str(activity.info().workflow_id), given))


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class StandIn:
    """Registered under the consolidation workflow's name, on this test's own queue only."""

    @workflow.run
    async def run(self, given: ConsolidationInput) -> None:
        await workflow.execute_activity(SAW, given, start_to_close_timeout=timedelta(seconds=30))


def test_off_by_default_then_the_owner_opts_in_to_a_nightly_schedule_and_out(
    api: Api, svc: Services, settings: Settings
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    first = settings_of(api, owner, ws)
    assert first.status_code == 200, first.text
    assert first.json() == {
        "enabled": False,
        "autoFile": False,
        "revision": 0,
        "cron": NIGHTLY_CRON,
        "scheduled": False,
        "nextRunAt": None,
    }
    assert described(settings, svc, ws) is None

    opted = put(api, owner, ws, True, 0)
    assert opted.status_code == 200, opted.text
    assert {k: opted.json()[k] for k in ("enabled", "autoFile", "revision", "scheduled")} == {
        "enabled": True,
        "autoFile": False,
        "revision": 1,
        "scheduled": True,
    }
    found = described(settings, svc, ws)
    assert found is not None
    schedule, given = found
    action = schedule.schedule.action
    assert isinstance(action, ScheduleActionStartWorkflow)
    assert (action.workflow, action.id, action.task_queue) == (
        WORKFLOW_NAME,
        consolidation_schedule_id(ws),
        settings.temporal_task_queue,
    )
    assert given == ConsolidationInput(workspace_id=ws, trigger=RunTrigger.SCHEDULE)
    assert schedule.schedule.policy.overlap is ScheduleOverlapPolicy.SKIP
    # The cron as Temporal reads it: every upcoming time is 03:17 UTC, a day apart.
    upcoming = schedule.info.next_action_times[:3]
    assert [(t.hour, t.minute, t.second) for t in upcoming] == [(3, 17, 0)] * 3
    assert upcoming[1] - upcoming[0] == timedelta(days=1)
    assert upcoming[0] - datetime.now(UTC) <= timedelta(days=1)
    assert datetime.fromisoformat(opted.json()["nextRunAt"]) == upcoming[0]

    again = put(api, owner, ws, True, 1, autoFile=True)  # a repeat keeps the one schedule
    assert (again.status_code, again.json()["revision"], again.json()["autoFile"]) == (200, 2, True), again.text
    assert described(settings, svc, ws) is not None

    out = put(api, owner, ws, False, 2)
    assert (out.status_code, out.json()["scheduled"], out.json()["enabled"]) == (200, False, False), out.text
    assert described(settings, svc, ws) is None
    assert put(api, owner, ws, False, 3).status_code == 200  # opting out again is fine
    assert settings_of(api, owner, ws).json()["scheduled"] is False

    assert audited(api, owner, ws, "consolidation") == [
        ("opted-in", owner, ws),
        ("opted-in", owner, ws),
        ("opted-out", owner, ws),
        ("opted-out", owner, ws),
    ]


def test_a_stale_revision_is_refused_naming_the_current_one(api: Api, svc: Services, settings: Settings) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert put(api, owner, ws, True, 0).status_code == 200
    before = svc.table.get(*keys.consolidation(ws))
    stale = put(api, owner, ws, False, 0)
    assert stale.status_code == 409, stale.text
    assert (stale.json()["error"]["code"], stale.json()["currentRevision"]) == ("STALE_REVISION", 1)
    assert svc.table.get(*keys.consolidation(ws)) == before
    assert described(settings, svc, ws) is not None
    assert put(api, owner, ws, False, 1).status_code == 200


def test_only_the_owner_reads_sets_or_starts_and_a_refusal_changes_nothing(
    api: Api, svc: Services, settings: Settings
) -> None:
    owner, editor, viewer, stranger = new_user("owner"), new_user("editor"), new_user("viewer"), new_user("x")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    api.add_member(owner, ws, viewer, "viewer")
    for user, status, code in ((editor, 403, "FORBIDDEN"), (viewer, 403, "FORBIDDEN"), (stranger, 404, None)):
        for response in (settings_of(api, user, ws), put(api, user, ws, True, 0), ask(api, user, ws)):
            assert response.status_code == status, response.text
            assert response.json()["error"]["code"] == (code or "WORKSPACE_NOT_FOUND")
    assert svc.table.get(*keys.consolidation(ws)) is None
    assert svc.table.get(*keys.consolidation_latest_run(ws)) is None
    assert described(settings, svc, ws) is None
    assert settings_of(api, owner, ws).json()["revision"] == 0
    assert audited(api, owner, ws, "consolidation") == []
    assert audited(api, owner, ws, "consolidation-run") == []


def test_the_owner_starts_a_run_now_and_a_second_ask_answers_the_same_run(
    api: Api, svc: Services, settings: Settings, started: list[str]
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    first = ask(api, owner, ws)  # whether or not the schedule is on: it is off here
    assert first.status_code == 202, first.text
    run_id = first.json()["runId"]
    assert run_id.startswith("cr_")
    assert first.json()["trigger"] == "owner"
    workflow_id = consolidation_workflow_id(ws, run_id)
    started.append(workflow_id)

    async def execution() -> tuple[str, WorkflowExecutionStatus | None, ConsolidationInput]:
        client = await codec_client(settings, svc.cipher)
        handle = client.get_workflow_handle(workflow_id)
        found = await handle.describe()
        history = await handle.fetch_history()
        attributes = history.events[0].workflow_execution_started_event_attributes
        (given,) = await client.data_converter.decode(attributes.input.payloads, [ConsolidationInput])
        return found.workflow_type, found.status, given

    workflow_type, status, given = run(execution())
    assert (workflow_type, status) == (WORKFLOW_NAME, WorkflowExecutionStatus.RUNNING)
    assert given == ConsolidationInput(workspace_id=ws, run_id=run_id, trigger=RunTrigger.OWNER)

    second = ask(api, owner, ws)  # one run at a time: the one going is the answer
    assert (second.status_code, second.json()) == (200, {"runId": run_id, "trigger": "owner"}), second.text
    assert audited(api, owner, ws, "consolidation-run") == [("requested", owner, run_id)]


def test_the_schedule_fired_starts_the_consolidation_workflow_for_the_workspace(
    svc: Services, settings: Settings
) -> None:
    """On a queue of its own, served by a stand-in under the workflow's name: `trigger()` fires the schedule
    as the night would, and the stand-in's activity reports the run it was started as."""
    owner = new_user("owner")
    ws = svc.access.create_workspace(owner, "team", ShareType.SHARED)
    queue = f"q-consolidation-{uuid.uuid4().hex[:8]}"
    queued = settings.model_copy(update={"temporal_task_queue": queue})
    control = ConsolidationControl(svc.table, svc.clock, TemporalConsolidation(queued, svc.cipher))
    assert control.set(owner, ws, True, None, 0).scheduled

    async def fire() -> tuple[str, ConsolidationInput]:
        client = await codec_client(settings, svc.cipher)
        seen: asyncio.Future[tuple[str, ConsolidationInput]] = asyncio.get_running_loop().create_future()

        async with Worker(client, task_queue=queue, workflows=[StandIn], activities=[Seen(seen).saw]):
            await client.get_schedule_handle(consolidation_schedule_id(ws)).trigger()
            return await asyncio.wait_for(seen, timeout=60)

    try:
        workflow_id, given = run(fire())
    finally:
        control.set(owner, ws, False, None, 1)
    assert workflow_id.startswith(consolidation_schedule_id(ws) + "-")
    assert given == ConsolidationInput(workspace_id=ws, trigger=RunTrigger.SCHEDULE)
    assert described(settings, svc, ws) is None


def test_deleting_the_workspace_removes_its_schedule(
    api: Api, svc: Services, settings: Settings, started: list[str]
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert put(api, owner, ws, True, 0).json()["scheduled"] is True
    deleted = api.call("DELETE", f"/v1/workspaces/{ws}", user=owner, headers={"X-Confirm-Workspace": ws})
    assert deleted.status_code == 202, deleted.text
    started.append(deletion_workflow_id(ws))
    assert described(settings, svc, ws) is None
    assert settings_of(api, owner, ws).status_code == 404
