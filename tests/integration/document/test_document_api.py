"""The memory document through the local gateway, against the moto server, with real KMS crypto."""

from __future__ import annotations

import uuid

import pytest

from tests.support import RUNTIME, Api, admission_headers, new_user

pytestmark = pytest.mark.integration


def test_save_read_history_undo_clear_round_trip(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.read(owner, ws)["version"] == 0

    first = api.save(owner, ws, "# Memory\n- alpha\n", 0)
    assert first.status_code == 200, first.text
    assert first.json()["version"] == 1
    second = api.save(owner, ws, "# Memory\n- alpha\n- beta\n", 1)
    assert second.json()["version"] == 2

    doc = api.read(owner, ws)
    assert doc["content"] == "# Memory\n- alpha\n- beta\n"
    assert doc["bytes"] == len(doc["content"].encode())
    assert doc["updatedBy"] == owner
    assert doc["recallEligible"] is True

    undo = api.undo(owner, ws, 1, 2)
    assert undo.status_code == 200, undo.text
    assert undo.json()["restoredFrom"] == 1
    assert api.read(owner, ws)["content"] == "# Memory\n- alpha\n"

    clear = api.clear(owner, ws, 3)
    assert clear.status_code == 200, clear.text
    assert clear.json()["clearGeneration"] == 1
    assert api.read(owner, ws)["content"] == ""
    policy = api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()
    assert policy == {"mode": "read_only", "policyRevision": 0, "clearGeneration": 1}

    history = api.call("GET", f"/v1/workspaces/{ws}/memory/versions", user=owner).json()
    assert [v["version"] for v in history["versions"]] == [4, 3, 2, 1]
    assert [v["op"] for v in history["versions"]] == ["clear", "undo", "save", "save"]
    assert all(len(v["ciphertextSha256"]) == 64 for v in history["versions"])
    assert history["nextCursor"] is None

    old = api.call("GET", f"/v1/workspaces/{ws}/memory/versions/2", user=owner)
    assert old.json()["content"] == "# Memory\n- alpha\n- beta\n"


def test_history_paginates_without_gaps(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    for base in range(5):
        assert api.save(owner, ws, f"v{base + 1}", base).status_code == 200
    seen: list[int] = []
    cursor = None
    while True:
        path = f"/v1/workspaces/{ws}/memory/versions?limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = api.call("GET", path, user=owner).json()
        seen.extend(v["version"] for v in page["versions"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == [5, 4, 3, 2, 1]


def test_undo_keeps_generation_and_policy_revision(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.save(owner, ws, "keep me", 0)
    api.clear(owner, ws, 1)
    api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0})
    undo = api.undo(owner, ws, 1, 2)
    assert undo.status_code == 200
    assert api.read(owner, ws)["content"] == "keep me"
    policy = api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()
    assert policy == {"mode": "auto", "policyRevision": 1, "clearGeneration": 1}


def test_stale_base_writes_nothing_and_names_current_version(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.save(owner, ws, "one", 0)
    api.save(owner, ws, "two", 1)
    stale = api.save(owner, ws, "three", 1)
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "STALE_BASE_VERSION"
    assert stale.json()["currentVersion"] == 2
    create_only = api.save(owner, ws, "again", 0)
    assert create_only.status_code == 409
    assert api.read(owner, ws)["content"] == "two"


def test_clear_with_stale_base_leaves_generation_and_text(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.save(owner, ws, "one", 0)
    api.save(owner, ws, "two", 1)
    stale = api.clear(owner, ws, 1)
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "STALE_BASE_VERSION"
    assert api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()["clearGeneration"] == 0
    assert api.read(owner, ws)["content"] == "two"
    versions = api.call("GET", f"/v1/workspaces/{ws}/memory/versions", user=owner).json()["versions"]
    assert [v["version"] for v in versions] == [2, 1]


def test_policy_compare_and_set(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    first = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0}
    )
    assert first.json() == {"mode": "auto", "policyRevision": 1, "clearGeneration": 0}
    same = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 1}
    )
    assert same.json()["policyRevision"] == 2
    stale = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "off", "expectedRevision": 1}
    )
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "STALE_POLICY_REVISION"
    assert stale.json()["current"] == {"mode": "auto", "policyRevision": 2, "clearGeneration": 0}


def test_ai_toggle_bumps_consent_revision(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    on = api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    assert on.json() == {"enabled": True, "consentRevision": 1}
    off = api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": False})
    assert off.json() == {"enabled": False, "consentRevision": 2}


def test_key_session_open_and_revoke(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    opened = api.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=owner, json={"ttlSeconds": 600})
    assert opened.status_code == 201
    session_id = opened.json()["keySessionId"]
    assert opened.json()["expiresAt"].endswith("Z")
    assert api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{session_id}", user=owner).status_code == 204
    assert api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{session_id}", user=owner).status_code == 204
    missing = api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/ks_nope", user=owner)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "KEY_SESSION_NOT_FOUND"
    bad_ttl = api.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=owner, json={"ttlSeconds": 5})
    assert bad_ttl.status_code == 400


def test_people_save_undo_and_clear_while_the_policy_is_off(api: Api) -> None:
    """`off` turns the assistant's memory off, never the people's: Save, Undo and Clear work as in any mode,
    and the assistant's recall says `off` and hands over no text (seed 000: the policy governs agents)."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    off = api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "off", "expectedRevision": 0})
    assert off.json()["mode"] == "off", off.text
    assert api.save(owner, ws, "# Team\n- first\n", 0).status_code == 200
    assert api.save(owner, ws, "# Team\n- second\n", 1).status_code == 200
    assert api.undo(owner, ws, 1, 2).status_code == 200
    assert api.read(owner, ws)["content"] == "# Team\n- first\n"
    assert api.clear(owner, ws, 3).status_code == 200
    assert api.read(owner, ws)["content"] == ""
    policy = api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()
    assert policy == {"mode": "off", "policyRevision": 1, "clearGeneration": 1}
    assert api.save(owner, ws, "# Team\n- after the clear\n", 4).status_code == 200

    admitted = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, owner, api.key_session(owner, ws))
    assert admitted.status_code == 201, admitted.text
    recall = api.call(
        "GET",
        f"/v1/automation/workspaces/{ws}/memory?purpose=recall",
        automation=RUNTIME,
        headers=admission_headers(admitted.json()),
    )
    assert recall.status_code == 200, recall.text
    assert recall.json()["status"] == "off"
    assert "after the clear" not in recall.text
