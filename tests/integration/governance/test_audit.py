"""The audit trail on the real stack: every write route and every agent write of a turn shows up with its
actor (and, for an agent, its turn's admission); no text anywhere in it; members see only their own; bad
queries are refused with stable codes and change nothing."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.turns.test_turns import finish, start_turn
from tests.support import Api, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration


def _audit(api: Api, user: str, ws: str, query: str = "") -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    cursor = ""
    while True:
        response = api.call("GET", f"/v1/workspaces/{ws}/audit?limit=100{query}{cursor}", user=user)
        assert response.status_code == 200, response.text
        page = response.json()
        events += page["events"]
        if page["nextCursor"] is None:
            return events
        cursor = f"&cursor={page['nextCursor']}"


def _told(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None, str]]:
    return [(e["kind"], e["op"], e["actor"], e["actorKind"]) for e in reversed(events)]


def _entry(title: str, body: str) -> dict[str, Any]:
    return {"type": "fact", "title": title, "summary": body, "body": body, "scope": "workspace"}


def test_every_write_route_and_agent_write_is_audited_without_text(
    api: Api, svc: Services, worker: Settings, resources: LocalResources
) -> None:
    marker = f"AUDITMARK{uuid.uuid4().hex[:10]}"
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    policy = {"mode": "auto", "expectedRevision": 0}
    assert api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json=policy).status_code == 200
    assert api.save(owner, ws, f"# Memory\n- {marker} one\n", 0).status_code == 200
    assert api.save(editor, ws, "# Memory\n- two\n", 1).status_code == 200
    purge = api.call("POST", f"/v1/workspaces/{ws}/memory/purge", user=owner, json={"line": f"- {marker} one"})
    assert purge.status_code == 200, purge.text
    assert api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json={"historyDays": 30}).status_code == 200
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=editor, json=_entry(marker, f"{marker} body"))
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    moved = api.call(
        "PUT",
        f"/v1/workspaces/{ws}/entries/{entry_id}",
        user=editor,
        json={k: v for k, v in _entry(marker, "new body").items() if k != "scope"},
        headers={"X-Base-Revision": "1"},
    )
    assert moved.status_code == 200, moved.text
    forgot = api.call("DELETE", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner, headers={"X-Base-Revision": "2"})
    assert forgot.status_code == 204, forgot.text
    session = api.key_session(owner, ws)
    assert api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{session}", user=owner).status_code == 204

    turn_id = start_turn(
        api,
        owner,
        ws,
        f"conv-{uuid.uuid4().hex[:8]}",
        f"remember: - {marker} from the turn\nnote: {marker} note\nsave: {marker} | {marker} fact\nHello?",
        f"sess-{uuid.uuid4().hex[:8]}",
    )
    view = finish(worker, svc, turn_id)
    assert [o.ok for o in view.tool_outcomes] == [True, True, True]

    events = _audit(api, owner, ws)
    told = _told(events)
    assert told[:14] == [
        ("workspace", "created", owner, "person"),
        ("member", "editor", owner, "person"),
        ("consent", "ai-on", owner, "person"),
        ("policy", "auto", owner, "person"),
        ("document", "save", owner, "person"),
        ("document", "save", editor, "person"),
        ("document", "purge", owner, "person"),
        ("retention", "set", owner, "person"),
        ("entry", "created", editor, "person"),
        ("entry", "revised", editor, "person"),
        ("entry", "forgotten", owner, "person"),
        ("key-session", "opened", owner, "person"),
        ("key-session", "revoked", owner, "person"),
        ("turn", "admitted", owner, "person"),
    ]
    # The turn's three tool writes, in whatever order its rounds made them.
    assert sorted(told[14:]) == [
        ("document", "capture", owner, "agent"),
        ("entry", "created", owner, "agent"),
        ("notes", "written", owner, "agent"),
    ]
    by_kind = {(e["kind"], e["op"]): e for e in events}
    admitted = by_kind["turn", "admitted"]["admissionId"]
    assert admitted
    assert {e["admissionId"] for e in events if e["actorKind"] == "agent"} == {admitted}
    assert by_kind["document", "purge"]["targets"] == [{"kind": "document", "id": "1", "version": 1}]
    assert by_kind["entry", "forgotten"]["targets"][0]["id"] == entry_id

    # No text in the trail: not in the answers, not in the items, not even as a digest.
    digest = hashlib.sha256(marker.encode()).hexdigest()
    assert marker not in str(events)
    audit_items = [i for i in scan_all(resources) if i["pk"]["S"] == f"WS#{ws}" and i["sk"]["S"].startswith("AUDIT#")]
    assert len(audit_items) == len(events)
    assert [i for i in audit_items if marker.encode() in item_bytes(i) or digest.encode() in item_bytes(i)] == []

    # A member reads their own actions only; asking for another's is refused.
    assert {e["actor"] for e in _audit(api, editor, ws)} == {editor}
    refused = api.call("GET", f"/v1/workspaces/{ws}/audit?actor={owner}", user=editor)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "FORBIDDEN")
    assert _told(_audit(api, owner, ws, f"&actor={editor}&kind=entry")) == [
        ("entry", "created", editor, "person"),
        ("entry", "revised", editor, "person"),
    ]
    stranger = api.call("GET", f"/v1/workspaces/{ws}/audit", user=new_user("stranger"))
    assert (stranger.status_code, stranger.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")


@pytest.mark.parametrize(
    "query",
    [
        "since=yesterday",
        "until=2026-13-01T00:00:00Z",
        "since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z",
        "kind=gossip",
        "limit=0",
        "limit=101",
        "cursor=%25%25%25",
        "actor=",
    ],
)
def test_bad_audit_queries_are_refused_and_change_nothing(api: Api, resources: LocalResources, query: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    before = sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"]))
    response = api.call("GET", f"/v1/workspaces/{ws}/audit?{query}", user=owner)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "INVALID_REQUEST"), query
    assert sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"])) == before
