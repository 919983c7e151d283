"""Durable agent turns on the real Temporal dev server, with a real worker, the gateway and the moto server."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.integration.turn_support import codec_client, plain_client, run
from tests.support import Api, admission_headers, new_user
from workflows.prompt import PERSONA
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.turns.turn_contract import TurnView

pytestmark = pytest.mark.integration


def auto_workspace(api: Api, content: str) -> tuple[str, str]:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0})
    assert api.save(owner, ws, content, 0).status_code == 200
    return owner, ws


def start_turn(
    api: Api, owner: str, ws: str, conv: str, message: str, session: str | None, key: str | None = None
) -> str:
    body: dict[str, Any] = {"workspaceId": ws, "message": message, "idempotencyKey": key or uuid.uuid4().hex}
    if session:
        body["sessionId"] = session
    response = api.call("POST", f"/v1/conversations/{conv}/turns", user=owner, json=body)
    assert response.status_code == 202, response.text
    turn_id: str = response.json()["turnId"]
    return turn_id


def stored_notes(api: Api, owner: str, ws: str, session: str) -> dict[str, Any]:
    """The session's notes as the owner's agent runtime reads them: through an admission of that session,
    under a key session the owner opened."""
    conv = f"conv-read-{uuid.uuid4().hex[:8]}"
    admitted = api.admit(
        conv, ws, owner, api.key_session(owner, ws), key="read-notes", automation="test", sessionId=session
    )
    assert admitted.status_code == 201, admitted.text
    headers = admission_headers(admitted.json())
    response = api.call("GET", f"/v1/automation/sessions/{session}/notes", automation="test", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def finish(settings: Settings, svc: Services, turn_id: str) -> TurnView:
    async def wait() -> TurnView:
        client = await codec_client(settings, svc.cipher)
        result: TurnView = await client.get_workflow_handle(turn_id, result_type=TurnView).result()
        return result

    return run(wait())


def test_a_turn_remembers_notes_and_answers_from_both(api: Api, svc: Services, worker: Settings) -> None:
    owner, ws = auto_workspace(api, "# Memory\n- deploys on Fridays\n")
    conv, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    message = "remember: - use feature flags\nnote: check the canary first\nWhat do you know?"
    turn_id = start_turn(api, owner, ws, conv, message, session)
    view = finish(worker, svc, turn_id)

    assert view.status == "completed"
    assert view.rounds == 3
    assert [(o.tool, o.outcome) for o in view.tool_outcomes] == [
        ("remember_in_memory", "committed"),
        ("working_notes_update", "saved"),
    ]
    assert [r.status for r in view.receipts] == ["ok", "ok", "ok"]
    assert [r.revision for r in view.receipts] == [1, 2, 2]
    assert view.answer is not None
    # Round 3 saw the committed capture in its memory block and round 2's note in its notes block.
    assert "- use feature flags" in view.answer
    assert "check the canary first" in view.answer
    assert api.read(owner, ws)["content"] == "# Memory\n- deploys on Fridays\n- use feature flags\n"

    status = api.call("GET", f"/v1/conversations/{conv}/turns/{turn_id}", user=owner).json()
    assert status["status"] == "completed"
    assert status["rounds"] == 3
    assert status["answer"] == view.answer
    assert status["toolOutcomes"][0]["version"] == 2
    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner).json()
    assert [r["turnId"] for r in receipts["receipts"]] == [turn_id] * 3
    assert receipts["nextCursor"] is None
    assert api.call("GET", f"/v1/conversations/{conv}/turns/{turn_id}", user=new_user("x")).status_code == 404
    nope = api.call("GET", f"/v1/conversations/{conv}/turns/turn-nope", user=owner)
    assert (nope.status_code, nope.json()["error"]["code"]) == (404, "TURN_NOT_FOUND")
    # The turn is its conversation's owner's: a fellow member gets the very answer of a turn that does not exist.
    member = new_user("member")
    api.add_member(owner, ws, member, "editor")
    denied = api.call("GET", f"/v1/conversations/{conv}/turns/{turn_id}", user=member)
    assert (denied.status_code, denied.json()) == (404, nope.json())


def test_notes_reach_the_next_round_and_turn_but_not_a_new_session(api: Api, svc: Services, worker: Settings) -> None:
    owner, ws = auto_workspace(api, "# Memory\n")
    conv, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    note = f"NOTE-{uuid.uuid4().hex}"
    first = finish(worker, svc, start_turn(api, owner, ws, conv, f"note: {note}\nWhat is in my notes?", session))
    assert first.answer is not None
    assert first.rounds == 2
    notes_block = first.answer.split("Working notes I was given:\n", 1)[1]
    assert f"<<<WORKING-NOTES\n{note}\nWORKING-NOTES>>>" in notes_block  # round 2's prompt, exactly

    second = finish(worker, svc, start_turn(api, owner, ws, conv, "What is in my notes?", session))
    assert second.answer is not None
    assert note in second.answer
    other = finish(worker, svc, start_turn(api, owner, ws, conv, "What is in my notes?", f"{session}-new"))
    assert other.answer is not None
    assert note not in other.answer
    assert other.answer.rstrip().endswith("(none)")


def test_notes_over_the_cap_are_refused_and_unchanged(api: Api, svc: Services, worker: Settings) -> None:
    owner, ws = auto_workspace(api, "# Memory\n")
    conv, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    big = "a" * 20000
    finish(worker, svc, start_turn(api, owner, ws, conv, f"note: {big}", session))
    view = finish(worker, svc, start_turn(api, owner, ws, conv, "note: " + "b" * 15000, session))
    assert [(o.tool, o.ok, o.outcome) for o in view.tool_outcomes] == [("working_notes_update", False, "too_large")]
    assert view.answer is not None
    assert "over the 32 KiB cap" in view.answer
    stored = stored_notes(api, owner, ws, session)
    assert stored["notes"] == big
    assert stored["revision"] == 1


def test_same_idempotency_key_is_the_same_turn(api: Api, svc: Services, worker: Settings) -> None:
    owner, ws = auto_workspace(api, "# Memory\n")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    first = start_turn(api, owner, ws, conv, "remember: - once", None, key="same-key")
    again = start_turn(api, owner, ws, conv, "remember: - once", None, key="same-key")
    assert first == again
    finish(worker, svc, first)
    versions = api.call("GET", f"/v1/workspaces/{ws}/memory/versions", user=owner).json()["versions"]
    assert [v["op"] for v in versions] == ["capture", "save"]


def test_history_holds_only_ciphertext(api: Api, svc: Services, worker: Settings) -> None:
    marker_memory, marker_note = f"MEM-{uuid.uuid4().hex}", f"NOTE-{uuid.uuid4().hex}"
    owner, ws = auto_workspace(api, f"# Memory\n- {marker_memory}\n")
    conv, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    turn_id = start_turn(api, owner, ws, conv, f"note: {marker_note}\nremember: - {marker_note} too\nrecall?", session)
    view = finish(worker, svc, turn_id)
    assert view.answer is not None
    assert marker_memory in view.answer  # the model did see memory...

    async def histories() -> tuple[bytes, bytes]:
        """Every byte of the history (payloads included, unencoded), without and with the codec."""
        history = await (await plain_client(worker)).get_workflow_handle(turn_id).fetch_history()
        return _history_bytes(history), await _decoded_bytes(history, svc)

    raw, decoded = run(histories())
    assert marker_memory.encode() not in raw  # ...but the server stores only ciphertext
    assert marker_note.encode() not in raw
    assert b"workspace-memory/kms-v1" in raw
    assert marker_note.encode() in decoded  # the codec really is what hides it
    # The system prompt (persona, recalled block, notes block, tool catalog) never left the model-round
    # activity; memory text is in history only where the model itself quoted it in its answer.
    assert PERSONA.encode() not in decoded
    assert b"### Tools" not in decoded
    assert decoded.count(marker_memory.encode()) == decoded.count(b"Memory I was given:")


def test_turn_is_refused_while_ai_is_off(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    response = api.call(
        "POST",
        "/v1/conversations/conv-off/turns",
        user=owner,
        json={"workspaceId": ws, "message": "hi", "idempotencyKey": "k"},
    )
    assert (response.status_code, response.json()["error"]["code"]) == (403, "AI_DISABLED")


def _payloads(message: Any, found: list[Any]) -> list[Any]:
    """Every Payload inside a history protobuf, wherever it sits (fields, lists, maps)."""
    from temporalio.api.common.v1 import Payload

    for field, value in message.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        if field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].type != field.TYPE_MESSAGE:
                continue
            values = list(value.values())
        elif field.is_repeated:
            values = list(value)
        else:
            values = [value]
        for item in values:
            if isinstance(item, Payload):
                found.append(item)
            else:
                _payloads(item, found)
    return found


def _history_bytes(history: Any) -> bytes:
    from temporalio.api.history.v1 import History

    return bytes(History(events=history.events).SerializeToString())


async def _decoded_bytes(history: Any, svc: Services) -> bytes:
    """The history's payloads run through the codec, as the worker sees them."""
    from workspace_memory.adapters.temporal_codec import KmsPayloadCodec

    found: list[Any] = []
    for event in history.events:
        _payloads(event, found)
    decoded = await KmsPayloadCodec(svc.cipher).decode(found)
    return b"".join(p.SerializeToString() for p in decoded)
