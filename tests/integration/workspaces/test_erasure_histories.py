"""An erasure reaches past the tables (decisions/0067): the Temporal executions of the member's turns, whose
histories carry their messages under the stack's key (not the workspace's, so no crypto-shred reaches them),
are deleted before the receipt is written; another member's turn is left alone. On the real stack: the
gateway, the Temporal dev server and the production worker."""

from __future__ import annotations

import uuid

import pytest

from tests.integration.turn_support import codec_client, run, running_worker, worker_settings
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


def test_an_erasure_deletes_the_members_turn_histories_and_no_one_elses(
    api: Api, svc: Services, settings: Settings, gateway_url: str
) -> None:
    t = team(api)
    idle = settings.model_copy(update={"temporal_task_queue": f"q-erase-turns-{uuid.uuid4().hex[:8]}"})
    turns = TurnService(svc.table, svc.admission, TemporalTurns(idle, svc.cipher))

    def start(user: str, message: str) -> str:
        request = AdmissionRequest(f"conv-{uuid.uuid4().hex[:8]}", t.ws, user, "k", message=message)
        return turns.start(request).turn_id

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

    async def terminate() -> None:
        client = await codec_client(settings, svc.cipher)
        await client.get_workflow_handle(others).terminate(reason="test over")

    run(terminate())
