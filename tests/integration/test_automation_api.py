"""Admission, recall, capture and receipts over HTTP, through the local gateway and the real handlers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.support import Api, captured_service_logs, item_bytes, new_user, scan_all

pytestmark = pytest.mark.integration

RUNTIME = "agent-runtime"


def auto_workspace(api: Api, content: str) -> tuple[str, str]:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0}
    )
    assert policy.status_code == 200
    assert api.save(owner, ws, content, 0).status_code == 200
    return owner, ws


def admit(api: Api, conv: str, ws: str, user: str, key: str, **extra: Any) -> Any:
    return api.call(
        "POST",
        f"/v1/automation/conversations/{conv}/admissions",
        automation=RUNTIME,
        json={"workspaceId": ws, "userId": user, "idempotencyKey": key, **extra},
    )


def recall(api: Api, ws: str, admission: dict[str, Any]) -> Any:
    return api.call(
        "GET",
        f"/v1/automation/workspaces/{ws}/memory?purpose=recall",
        automation=RUNTIME,
        headers={"X-Admission-Id": admission["admissionId"], "X-Delivery-Credential": admission["credential"]},
    )


def capture(
    api: Api, ws: str, admission: dict[str, Any], edits: list[dict[str, Any]], base: int, key: str | None = None
) -> Any:
    return api.call(
        "PUT",
        f"/v1/automation/workspaces/{ws}/memory",
        automation=RUNTIME,
        json={
            "admissionId": admission["admissionId"],
            "credential": admission["credential"],
            "edits": edits,
            "baseVersion": base,
        },
        headers={"Idempotency-Key": key or f"memory:{admission['admissionId']}"},
    )


def test_admit_recall_capture_and_receipts(api: Api) -> None:
    owner, ws = auto_workspace(api, "# Memory\n- deploys on Fridays\n")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    first = admit(api, conv, ws, owner, "turn-1")
    assert first.status_code == 201, first.text
    admission = first.json()
    assert set(admission) == {"admissionId", "credential", "expiresAt", "mode"}
    again = admit(api, conv, ws, owner, "turn-1")
    assert again.status_code == 200
    assert again.json() == admission  # same key -> same admission and credential

    recalled = recall(api, ws, admission)
    assert recalled.status_code == 200
    body = recalled.json()
    assert (body["status"], body["revision"]) == ("ok", 1)
    assert "- deploys on Fridays" in body["block"]

    captured = capture(api, ws, admission, [{"op": "add", "line": "- use feature flags", "heading": "# Memory"}], 1)
    assert captured.status_code == 200, captured.text
    assert captured.json()["outcome"] == "committed"
    assert captured.json()["version"] == 2
    replay = capture(api, ws, admission, [{"op": "add", "line": "- use feature flags", "heading": "# Memory"}], 1)
    assert replay.json()["receipt"] == captured.json()["receipt"]
    assert api.read(owner, ws)["content"] == "# Memory\n- deploys on Fridays\n- use feature flags\n"

    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner)
    assert receipts.status_code == 200
    assert [(r["status"], r["revision"]) for r in receipts.json()["receipts"]] == [("ok", 1)]
    stranger = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=new_user("stranger"))
    assert stranger.status_code == 404


def test_admission_is_refused_while_ai_is_off(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    refused = admit(api, "conv-ai-off", ws, owner, "k1")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "AI_DISABLED"


def test_capture_errors_are_clear_and_change_nothing(api: Api) -> None:
    owner, ws = auto_workspace(api, "# Memory\n- one\n- one\n")
    admission = admit(api, f"conv-{uuid.uuid4().hex[:8]}", ws, owner, "k").json()
    wrong_key = capture(api, ws, admission, [{"op": "add", "line": "- x"}], 1, key="memory:other")
    assert (wrong_key.status_code, wrong_key.json()["error"]["code"]) == (400, "INVALID_REQUEST")
    ambiguous = capture(api, ws, admission, [{"op": "remove", "line": "- one"}], 1)
    assert (ambiguous.status_code, ambiguous.json()["error"]["code"]) == (400, "INVALID_EDITS")
    assert ambiguous.json()["problems"] == [{"index": 0, "reason": "ambiguous"}]
    too_many = capture(api, ws, admission, [{"op": "add", "line": f"- {i}"} for i in range(6)], 1)
    assert too_many.json()["problems"] == [{"index": -1, "reason": "too_many_edits"}]
    malformed = capture(api, ws, admission, [{"op": "explode", "line": "- SECRET-LINE"}], 1)
    assert malformed.status_code == 400
    assert "SECRET-LINE" not in malformed.text
    forged = dict(admission, credential="forged")
    assert capture(api, ws, forged, [{"op": "add", "line": "- x"}], 1).status_code == 403
    assert recall(api, ws, forged).status_code == 403
    assert api.read(owner, ws)["version"] == 1


def test_no_plaintext_in_admissions_receipts_or_logs(api: Api, resources: LocalResources) -> None:
    marker = f"MARKER-{uuid.uuid4().hex}"
    with captured_service_logs() as logs:
        owner, ws = auto_workspace(api, f"# Memory\n- {marker}\n")
        conv = f"conv-{uuid.uuid4().hex[:8]}"
        admission = admit(api, conv, ws, owner, "k").json()
        assert marker in recall(api, ws, admission).json()["block"]
        assert (
            capture(api, ws, admission, [{"op": "add", "line": f"- {marker} captured"}], 1).json()["outcome"]
            == "committed"
        )
        conflict = capture(
            api, ws, admit(api, conv, ws, owner, "k2").json(), [{"op": "add", "line": f"- {marker} 2"}], 1
        )
        assert conflict.json()["outcome"] == "conflict"
        receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner)
        assert marker not in receipts.text
        notes = api.call("PUT", f"/v1/automation/sessions/s-{conv}/notes", automation=RUNTIME, json={"notes": marker})
        assert notes.status_code == 200
        assert marker not in notes.text
    items = scan_all(resources)
    assert [item["sk"]["S"] for item in items if marker.encode() in item_bytes(item)] == []
    assert admission["credential"].encode() not in b"".join(item_bytes(i) for i in items)
    assert ws in logs.getvalue()
    assert marker not in logs.getvalue()
    assert admission["credential"] not in logs.getvalue()


def test_notes_routes(api: Api) -> None:
    sid = f"sess-{uuid.uuid4().hex[:8]}"
    path = f"/v1/automation/sessions/{sid}/notes"
    assert api.call("GET", path, automation=RUNTIME).json() == {
        "revision": 0,
        "bytes": 0,
        "updatedAt": None,
        "notes": "",
    }
    put = api.call(
        "PUT", path, automation=RUNTIME, json={"notes": "check the deploy"}, headers={"X-Expected-Revision": "0"}
    )
    assert put.json()["revision"] == 1
    stale = api.call("PUT", path, automation=RUNTIME, json={"notes": "other"}, headers={"X-Expected-Revision": "0"})
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "NOTES_REVISION_CONFLICT")
    big = api.call("PUT", path, automation=RUNTIME, json={"notes": "x" * (32 * 1024 + 1)})
    assert (big.status_code, big.json()["error"]["code"]) == (413, "NOTES_TOO_LARGE")
    assert api.call("GET", path, automation=RUNTIME).json()["notes"] == "check the deploy"
    assert api.call("DELETE", path, automation=RUNTIME).json()["revision"] == 2
    assert api.call("GET", path, automation=RUNTIME).json()["notes"] == ""
    assert api.call("GET", path, user="a-human").status_code == 401
