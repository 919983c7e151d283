"""Least privilege for key sessions over HTTP (issue 17, finding 11; docs/decisions/0054): a session opened
without `scopes` may only read, a viewer may delegate nothing but reading, and a member lowered to viewer after
opening a session admits under it with reading only. Every refusal leaves the table as it was."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests

from scripts.localstack.resources import LocalResources
from tests.integration.turns.test_automation_api import auto_workspace, capture, recall
from tests.support import ALL_SCOPE_NAMES, RUNTIME, Api, admission_headers, new_user, scan_all
from workspace_memory.store import keys

pytestmark = pytest.mark.integration


def open_session(api: Api, user: str, ws: str, body: dict[str, Any]) -> requests.Response:
    return api.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=user, json=body)


def admitted(api: Api, ws: str, user: str, key_session: str, session_id: str) -> dict[str, Any]:
    response = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, user, key_session, sessionId=session_id)
    assert response.status_code == 201, response.text
    admission: dict[str, Any] = response.json()
    return admission


def code(response: requests.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def write_attempts(api: Api, ws: str, admission: dict[str, Any], session_id: str) -> dict[str, requests.Response]:
    """Every agent write a delegation could carry: a capture, a member-scope entry (no write right needed) and
    the session's working notes."""
    headers = admission_headers(admission)
    entry = {"scope": "member", "type": "fact", "title": "Deploys", "summary": "deploy day", "body": "Fridays"}
    return {
        "capture": capture(api, ws, admission, [{"op": "add", "line": "- a delegated line"}], 1),
        "member entry": api.call(
            "PUT",
            f"/v1/automation/workspaces/{ws}/entries",
            automation=RUNTIME,
            json=entry,
            headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
        ),
        "notes": api.call(
            "PUT",
            f"/v1/automation/sessions/{session_id}/notes",
            automation=RUNTIME,
            json={"notes": "a delegated note"},
            headers=headers,
        ),
    }


def partition(resources: LocalResources, ws: str) -> list[dict[str, Any]]:
    pk = keys.ws(ws)
    return sorted((i for i in scan_all(resources) if i["pk"]["S"] == pk), key=lambda i: str(i["sk"]["S"]))


def test_a_key_session_opened_without_scopes_reads_only(api: Api, resources: LocalResources) -> None:
    """The default is `memory:read`: the agent recalls, and every write it tries is 403 `SCOPE_NOT_GRANTED`."""
    owner, ws = auto_workspace(api, "# Memory\n- deploys on Fridays\n")
    opened = open_session(api, owner, ws, {})
    assert (opened.status_code, opened.json()["scopes"]) == (201, ["memory:read"]), opened.text
    sid = f"sess-{uuid.uuid4().hex[:8]}"
    admission = admitted(api, ws, owner, opened.json()["keySessionId"], sid)
    recalled = recall(api, ws, admission)
    assert (recalled.status_code, recalled.json()["memoryWrite"]) == (200, "none"), recalled.text
    before = partition(resources, ws)
    for name, response in write_attempts(api, ws, admission, sid).items():
        assert code(response) == (403, "SCOPE_NOT_GRANTED"), (name, response.text)
    assert partition(resources, ws) == before
    assert api.read(owner, ws)["version"] == 1


@pytest.mark.parametrize(
    "scopes",
    [["memory:write"], ["notes"], ["memory:read", "memory:write"], ["memory:read", "notes"], list(ALL_SCOPE_NAMES)],
)
def test_attack_a_viewer_asks_to_delegate_writing(api: Api, resources: LocalResources, scopes: list[str]) -> None:
    """A viewer asking for any write scope is 403 `SCOPE_EXCEEDS_ROLE` (never narrowed silently); no session is
    stored, and the viewer's read-only session (asked for, or the default) still opens."""
    owner, ws = auto_workspace(api, "# Memory\n")
    viewer = new_user("viewer")
    api.add_member(owner, ws, viewer, "viewer")
    before = partition(resources, ws)
    refused = open_session(api, viewer, ws, {"scopes": scopes})
    assert code(refused) == (403, "SCOPE_EXCEEDS_ROLE"), refused.text
    assert partition(resources, ws) == before
    listed = api.call("GET", f"/v1/workspaces/{ws}/key-sessions", user=viewer).json()["keySessions"]
    assert listed == []
    for body in ({"scopes": ["memory:read"]}, {}):
        opened = open_session(api, viewer, ws, body)
        assert (opened.status_code, opened.json()["scopes"]) == (201, ["memory:read"]), opened.text


def test_a_member_lowered_to_viewer_admits_under_an_older_session_read_only(
    api: Api, resources: LocalResources
) -> None:
    """An editor's session with every scope, then the owner lowers the editor to viewer: the session's next
    admission holds only `memory:read` (admission judges the role of now), so even the writes a viewer's own
    role allows (a private entry, notes) are not delegated; nothing is written."""
    owner, ws = auto_workspace(api, "# Memory\n- deploys on Fridays\n")
    editor = new_user("editor")
    api.add_member(owner, ws, editor, "editor")
    key_session = api.key_session(editor, ws)
    api.add_member(owner, ws, editor, "viewer")
    sid = f"sess-{uuid.uuid4().hex[:8]}"
    admission = admitted(api, ws, editor, key_session, sid)
    before = partition(resources, ws)
    for name, response in write_attempts(api, ws, admission, sid).items():
        assert code(response) == (403, "SCOPE_NOT_GRANTED"), (name, response.text)
    assert partition(resources, ws) == before
    assert recall(api, ws, admission).status_code == 200
