"""Erasing a member and deleting a workspace reach past the tables (decisions/0067, 0017): the Temporal
executions of the turns concerned, whose histories carry the messages under the stack's key (not the
workspace's, so no crypto-shred reaches them), are deleted before the receipt is written or the admissions
purged; any other turn is left alone. On the real stack: the gateway, the Temporal dev server and the
production worker."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from tests.integration.turn_support import codec_client, run, running_worker, worker_settings
from tests.integration.workspaces.test_deletion import wait_for_deletion
from tests.integration.workspaces.test_erasure import erase, receipt, team, wait_for_erasure
from tests.support import Api
from workspace_memory.adapters.temporal_turns import TemporalTurns
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.admission_request import AdmissionRequest
from workspace_memory.turns.service import TurnService

pytestmark = pytest.mark.integration


def described(settings: Settings, svc: Services, workflow_id: str) -> str | None:
    """The workflow's status as Temporal describes it; None when Temporal holds no such execution."""

    async def describe() -> str | None:
        from temporalio.service import RPCError, RPCStatusCode

        client = await codec_client(settings, svc.cipher)
        try:
            found = await client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return None
            raise
        return None if found.status is None else found.status.name

    return run(describe())


def starter(svc: Services, settings: Settings) -> Callable[[str, str, str], str]:
    """Starts a turn in a workspace for a user on a queue no worker polls: it stays open, its history holding
    the message."""
    idle = settings.model_copy(update={"temporal_task_queue": f"q-idle-turns-{uuid.uuid4().hex[:8]}"})
    turns = TurnService(svc.table, svc.admission, TemporalTurns(idle, svc.cipher))

    def start(ws: str, user: str, message: str) -> str:
        request = AdmissionRequest(f"conv-{uuid.uuid4().hex[:8]}", ws, user, "k", message=message)
        return turns.start(request).turn_id

    return start


def terminate(settings: Settings, svc: Services, workflow_id: str) -> None:
    async def end() -> None:
        client = await codec_client(settings, svc.cipher)
        await client.get_workflow_handle(workflow_id).terminate(reason="test over")

    run(end())


def test_an_erasure_deletes_the_members_turn_histories_and_no_one_elses(
    api: Api, svc: Services, settings: Settings, gateway_url: str
) -> None:
    t = team(api)
    begin = starter(svc, settings)

    def start(user: str, message: str) -> str:
        return begin(t.ws, user, message)

    # On a queue no worker polls: the turns stay open, their histories holding the messages.
    theirs = [start(t.member, "my own words, twice"), start(t.member, "my own words, again")]
    others = start(t.owner, "the owner's words")
    assert [described(settings, svc, turn) for turn in [*theirs, others]] == ["RUNNING"] * 3

    with running_worker(worker_settings(settings, gateway_url)):
        accepted = erase(api, t.owner, t.ws, t.member, t.member)
        assert accepted.status_code == 202, accepted.text
        erasure_id = accepted.json()["erasureId"]
        wait_for_erasure(settings, svc, t.ws, erasure_id)
    assert receipt(api, t.owner, t.ws, erasure_id).json()["status"] == "completed"
    assert [described(settings, svc, turn) for turn in theirs] == [None, None]  # gone before the receipt
    assert described(settings, svc, others) == "RUNNING"
    terminate(settings, svc, others)


def test_deleting_a_workspace_deletes_its_turn_histories_and_no_others(
    api: Api, svc: Services, settings: Settings, gateway_url: str
) -> None:
    doomed, kept = team(api), team(api)
    start = starter(svc, settings)
    theirs = [start(doomed.ws, doomed.member, "the member's words"), start(doomed.ws, doomed.owner, "the owner's")]
    elsewhere = start(kept.ws, kept.member, "words in another workspace")
    with running_worker(worker_settings(settings, gateway_url)):
        confirm = {"X-Confirm-Workspace": doomed.ws}
        deleted = api.call("DELETE", f"/v1/workspaces/{doomed.ws}", user=doomed.owner, headers=confirm)
        assert deleted.status_code == 202, deleted.text
        wait_for_deletion(settings, svc, doomed.ws)
    assert [described(settings, svc, turn) for turn in theirs] == [None, None]
    assert described(settings, svc, elsewhere) == "RUNNING"
    terminate(settings, svc, elsewhere)
