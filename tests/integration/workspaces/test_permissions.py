"""Read needs membership; write needs the owner, or an editor in a shared workspace."""

from __future__ import annotations

import pytest

from tests.support import Api, new_user

pytestmark = pytest.mark.integration


def workspace_routes(ws: str) -> list[tuple[str, str, dict[str, object] | None, dict[str, str]]]:
    base = {"X-Base-Version": "1"}
    return [
        ("PUT", f"/v1/workspaces/{ws}/members/someone", {"role": "viewer"}, {}),
        ("PUT", f"/v1/workspaces/{ws}/ai", {"enabled": True}, {}),
        ("GET", f"/v1/workspaces/{ws}/memory/policy", None, {}),
        ("PUT", f"/v1/workspaces/{ws}/memory/policy", {"mode": "auto", "expectedRevision": 0}, {}),
        ("GET", f"/v1/workspaces/{ws}/memory", None, {}),
        ("PUT", f"/v1/workspaces/{ws}/memory", {"content": "x"}, base),
        ("POST", f"/v1/workspaces/{ws}/memory/clear", None, base),
        ("POST", f"/v1/workspaces/{ws}/memory/undo", {"restoreVersion": 1}, base),
        ("GET", f"/v1/workspaces/{ws}/memory/versions", None, {}),
        ("GET", f"/v1/workspaces/{ws}/memory/versions/1", None, {}),
        ("POST", f"/v1/workspaces/{ws}/key-sessions", {}, {}),
        ("DELETE", f"/v1/workspaces/{ws}/key-sessions/ks_x", None, {}),
        ("POST", f"/v1/workspaces/{ws}/exports", {"scope": "me"}, {}),
        ("GET", f"/v1/workspaces/{ws}/exports/ex_{'0' * 24}", None, {}),
        ("GET", f"/v1/workspaces/{ws}/exports/ex_{'0' * 24}/archive", None, {}),
    ]


def test_non_member_gets_404_on_every_route_and_cannot_tell_existence(api: Api) -> None:
    owner, stranger = new_user("owner"), new_user("stranger")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "secret plans", 0).status_code == 200
    for method, path, body, headers in workspace_routes(ws):
        existing = api.call(method, path, user=stranger, json=body, headers=headers)
        missing = api.call(method, path.replace(ws, "ws_doesnotexist"), user=stranger, json=body, headers=headers)
        assert existing.status_code == 404, (method, path, existing.text)
        assert existing.json() == missing.json(), (method, path)
    assert api.read(owner, ws)["content"] == "secret plans"


def test_viewer_reads_but_cannot_write(api: Api) -> None:
    owner, viewer = new_user("owner"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, viewer, "viewer")
    api.save(owner, ws, "shared text", 0)
    assert api.read(viewer, ws)["content"] == "shared text"
    denied = api.save(viewer, ws, "viewer text", 1)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "FORBIDDEN"
    assert api.clear(viewer, ws, 1).status_code == 403
    assert api.read(owner, ws)["version"] == 1


def test_editor_writes_in_shared_but_not_in_private(api: Api) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    shared = api.workspace(owner, "shared")
    private = api.workspace(owner, "private")
    api.add_member(owner, shared, editor, "editor")
    api.add_member(owner, private, editor, "editor")
    assert api.save(editor, shared, "editor text", 0).status_code == 200
    refused = api.save(editor, private, "editor text", 0)
    assert refused.status_code == 403
    assert api.read(editor, private)["version"] == 0
    assert api.save(owner, private, "owner text", 0).status_code == 200


def test_only_owner_governs_policy_members_and_ai(api: Api) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=editor, json={"mode": "auto", "expectedRevision": 0}
    )
    assert policy.status_code == 403
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=editor, json={"enabled": True}).status_code == 403
    assert api.call("PUT", f"/v1/workspaces/{ws}/members/x", user=editor, json={"role": "editor"}).status_code == 403
    assert api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()["policyRevision"] == 0


def test_demoted_member_loses_write_right(api: Api) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    assert api.save(editor, ws, "one", 0).status_code == 200
    api.add_member(owner, ws, editor, "viewer")
    assert api.save(editor, ws, "two", 1).status_code == 403


def test_routes_need_the_right_kind_of_credential(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.call("GET", f"/v1/workspaces/{ws}/memory").status_code == 401
    assert api.call("GET", f"/v1/workspaces/{ws}/memory", automation="runtime").status_code == 401
    assert api.call("GET", "/v1/health").status_code == 200
