"""The routes the memory frame reads before anything is attempted: a person's view of a workspace (role, write
right, AI), their own key sessions, and their list of workspaces. Through the local gateway against the moto
server; bad input is checked against a scan of the table."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.support import Api, new_user, scan_all
from workspace_memory.store.cursors import encode_cursor

pytestmark = pytest.mark.integration

VIEW_FIELDS = {
    "workspaceId",
    "name",
    "shareType",
    "ownerId",
    "role",
    "canWrite",
    "aiEnabled",
    "consentRevision",
    "historyDays",
    "createdAt",
}


def view(api: Api, user: str, ws: str) -> dict[str, Any]:
    response = api.call("GET", f"/v1/workspaces/{ws}", user=user)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def delete(api: Api, owner: str, ws: str) -> None:
    response = api.call("DELETE", f"/v1/workspaces/{ws}", user=owner, headers={"X-Confirm-Workspace": ws})
    assert response.status_code == 202, response.text


def listed_sessions(api: Api, user: str, ws: str, limit: int = 20) -> list[dict[str, Any]]:
    """Every key session the listing gives `user`, page by page."""
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = f"?limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        response = api.call("GET", f"/v1/workspaces/{ws}/key-sessions{query}", user=user)
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"keySessions", "nextCursor"}
        found.extend(body["keySessions"])
        cursor = body["nextCursor"]
        if cursor is None:
            return found


def listed_workspaces(api: Api, user: str, limit: int = 50) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = f"?limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        response = api.call("GET", f"/v1/workspaces{query}", user=user)
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"workspaces", "nextCursor"}
        found.extend(body["workspaces"])
        cursor = body["nextCursor"]
        if cursor is None:
            return found


def test_a_member_sees_the_workspace_with_their_own_role(api: Api) -> None:
    owner, editor, viewer = new_user("owner"), new_user("editor"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    api.add_member(owner, ws, viewer, "viewer")
    secret = "remember the vault code 4711"
    assert api.save(owner, ws, secret, 0).status_code == 200

    seen = {user: view(api, user, ws) for user in (owner, editor, viewer)}
    for body in seen.values():
        assert set(body) == VIEW_FIELDS
        assert secret not in str(body)  # settings and role, never memory text
        assert (body["workspaceId"], body["name"], body["shareType"], body["ownerId"]) == (ws, "team", "shared", owner)
        assert (body["aiEnabled"], body["consentRevision"], body["historyDays"]) == (False, 0, 90)
    assert [(seen[u]["role"], seen[u]["canWrite"]) for u in (owner, editor, viewer)] == [
        ("owner", True),
        ("editor", True),
        ("viewer", False),
    ]

    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    after = view(api, viewer, ws)
    assert (after["aiEnabled"], after["consentRevision"]) == (True, 1)


def test_a_workspaces_name_is_sealed_in_the_table_and_read_back_by_its_members(
    api: Api, resources: LocalResources
) -> None:
    """Issue 17 finding 5, decision 0072: the name its owner typed is in no attribute in clear (the whole table
    scanned), and the view and the listing still show it to each member."""
    owner, viewer = new_user("owner"), new_user("viewer")
    name = f"Acme merger {uuid.uuid4().hex[:8]} — ask dana@example.org"
    created = api.call("POST", "/v1/workspaces", user=owner, json={"name": name, "shareType": "shared"})
    assert created.status_code == 201, created.text
    ws = created.json()["workspaceId"]
    api.add_member(owner, ws, viewer, "viewer")

    assert [view(api, user, ws)["name"] for user in (owner, viewer)] == [name, name]
    assert [w["name"] for w in listed_workspaces(api, viewer) if w["workspaceId"] == ws] == [name]
    table = scan_all(resources)
    (meta,) = [item for item in table if item["pk"] == {"S": f"WS#{ws}"} and item["sk"] == {"S": "META"}]
    assert "name" not in meta
    assert set(meta["nameCiphertext"]) == {"B"}
    assert name.split(" — ")[0] not in str(table)
    assert "dana@example.org" not in str(table)


def test_an_editor_of_a_private_workspace_cannot_write(api: Api) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner, "private")
    api.add_member(owner, ws, editor, "editor")
    body = view(api, editor, ws)
    assert (body["shareType"], body["role"], body["canWrite"]) == ("private", "editor", False)


def test_a_stranger_and_a_deleted_workspace_get_the_404_of_a_missing_one(api: Api) -> None:
    owner, stranger = new_user("owner"), new_user("stranger")
    live, doomed = api.workspace(owner), api.workspace(owner)
    api.key_session(owner, doomed)
    delete(api, owner, doomed)
    missing = "ws_" + "0" * 24
    for path in ("", "/key-sessions"):
        answers = [
            api.call("GET", f"/v1/workspaces/{ws}{path}", user=user)
            for user, ws in ((stranger, live), (owner, doomed), (stranger, missing))
        ]
        assert [r.status_code for r in answers] == [404, 404, 404]
        assert answers[0].content == answers[1].content == answers[2].content
        assert answers[0].json()["error"]["code"] == "WORKSPACE_NOT_FOUND"


def test_key_sessions_are_the_callers_own_newest_first_with_their_revocation(api: Api) -> None:
    owner, bob = new_user("owner"), new_user("bob")
    ws = api.workspace(owner)
    api.add_member(owner, ws, bob, "editor")
    mine = [api.key_session(owner, ws), api.key_session(owner, ws, ["memory:read"]), api.key_session(owner, ws)]
    theirs = [api.key_session(bob, ws), api.key_session(bob, ws)]
    assert api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{mine[1]}", user=owner).status_code == 204
    assert api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{theirs[0]}", user=bob).status_code == 204

    for limit in (20, 1, 2):  # one page, and page by page: the same sessions in the same order
        listed = listed_sessions(api, owner, ws, limit)
        assert [s["keySessionId"] for s in listed] == mine[::-1], limit
        assert [s["revoked"] for s in listed] == [False, True, False]
        assert listed[1]["scopes"] == ["memory:read"]
        assert listed[0]["scopes"] == ["memory:read", "memory:write", "notes"]
        assert all(set(s) == {"keySessionId", "scopes", "expiresAt", "revoked"} for s in listed)
    # The owner never sees another member's sessions, nor that member the owner's.
    assert [s["keySessionId"] for s in listed_sessions(api, bob, ws, 1)] == theirs[::-1]
    viewer = new_user("viewer")
    api.add_member(owner, ws, viewer, "viewer")
    assert listed_sessions(api, viewer, ws) == []


def test_the_callers_workspaces_are_listed_with_their_roles(api: Api) -> None:
    me, other = new_user("me"), new_user("other")
    own = [api.workspace(me), api.workspace(me, "private")]
    shared = api.workspace(other)
    api.add_member(other, shared, me, "viewer")
    gone = api.workspace(me)
    delete(api, me, gone)
    not_mine = api.workspace(other)

    expected = {own[0]: "owner", own[1]: "owner", shared: "viewer"}
    for limit in (50, 1):
        listed = listed_workspaces(api, me, limit)
        assert {w["workspaceId"]: w["role"] for w in listed} == expected, limit
        assert len(listed) == len(expected)  # no workspace twice across pages
        assert all(set(w) == {"workspaceId", "name", "role"} and w["name"] == "team" for w in listed)
    assert not_mine not in {w["workspaceId"] for w in listed_workspaces(api, me)}
    assert {w["workspaceId"] for w in listed_workspaces(api, other)} == {shared, not_mine}


@pytest.mark.parametrize(
    "query",
    [
        "key-sessions?cursor=%25%25%25",
        "key-sessions?cursor=" + encode_cursor("DOC#V#000000000001"),  # a cursor of another listing
        "key-sessions?limit=0",
        "key-sessions?limit=101",
        "key-sessions?limit=many",
        "key-sessions?cursor=" + "a" * 201,
    ],
)
def test_bad_key_session_paging_is_a_stable_400_and_changes_nothing(
    api: Api, resources: LocalResources, query: str
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.key_session(owner, ws)
    before = scan_all(resources)
    response = api.call("GET", f"/v1/workspaces/{ws}/{query}", user=owner)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "INVALID_REQUEST"
    assert scan_all(resources) == before


@pytest.mark.parametrize(
    "query",
    [
        "cursor=%25%25%25",
        "cursor=" + encode_cursor("MEMBER#someone"),  # not a workspace position
        "limit=0",
        "limit=51",
        "limit=many",
    ],
)
def test_bad_workspace_paging_is_a_stable_400_and_changes_nothing(
    api: Api, resources: LocalResources, query: str
) -> None:
    me = new_user("me")
    api.workspace(me)
    before = scan_all(resources)
    response = api.call("GET", f"/v1/workspaces?{query}", user=me)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "INVALID_REQUEST"
    assert scan_all(resources) == before
