"""`DELETE /v1/workspaces/{ws}/agent-memories` over HTTP on the local stack: the owner's one call forgets what
agents saved (in `auto`, and proposed in `read_only`), and people's entries and their history are exactly as
they were (a scan of the workspace before and after); anyone else, or a foreign cursor, changes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import admitted, agent_save, agent_workspace, workspace_items
from tests.integration.entries.test_entries import create, entry, fields, supersede
from tests.support import Api, new_user

pytestmark = pytest.mark.integration


def forget_all(api: Api, user: str, ws: str, cursor: str | None = None) -> Any:
    query = "" if cursor is None else f"?cursor={cursor}"
    return api.call("DELETE", f"/v1/workspaces/{ws}/agent-memories{query}", user=user)


def chain_items(items: list[dict[str, Any]], entry_id: str) -> list[dict[str, Any]]:
    return [i for i in items if entry_id in i["sk"]["S"]]


def test_the_owner_forgets_agent_memories_and_peoples_entries_stay(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "auto")
    editor = new_user("editor")
    api.add_member(owner, ws, editor, "editor")
    saved = agent_save(api, ws, admitted(api, ws, editor), uuid.uuid4().hex, title="Agent note")
    assert saved.status_code == 200, saved.text
    agent_entry = saved.json()["entryId"]
    human = create(api, owner, ws, entry(summary="on Fridays"))
    assert supersede(api, owner, ws, human, 1, fields(summary="on Tuesdays")).status_code == 200
    before = chain_items(workspace_items(resources, ws), human)
    assert len(before) == 3  # the head and two revisions

    done = forget_all(api, owner, ws)

    assert done.status_code == 200, done.text
    assert done.json() == {
        "forgotten": 1,
        "entryIds": [agent_entry],
        "kept": 1,
        "dismissed": 0,
        "candidateIds": [],
        "nextCursor": None,
    }
    after = workspace_items(resources, ws)
    assert chain_items(after, human) == before
    left = chain_items(after, agent_entry)
    assert [(i["sk"]["S"], i["status"]["S"]) for i in left] == [(f"ENTRY#{agent_entry}", "forgotten")]
    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{agent_entry}", user=owner).status_code == 410
    assert forget_all(api, owner, ws).json()["forgotten"] == 0  # a retry changes nothing


def test_pending_candidates_are_dismissed_unread(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "read_only")
    proposed = agent_save(api, ws, admitted(api, ws, owner), uuid.uuid4().hex, title="Agent proposal")
    assert proposed.status_code == 200, proposed.text
    candidate = proposed.json()["candidateId"]
    done = forget_all(api, owner, ws).json()
    assert (done["dismissed"], done["candidateIds"]) == (1, [candidate])
    assert api.call("GET", f"/v1/workspaces/{ws}/candidates", user=owner).json()["candidates"] == []
    (stored,) = [i for i in workspace_items(resources, ws) if i["sk"]["S"] == f"ENTRYCAND#{candidate}"]
    assert (stored["status"]["S"], "ciphertext" in stored) == ("rejected", False)


def test_others_and_bad_cursors_are_refused_and_change_nothing(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "auto")
    editor, stranger = new_user("editor"), new_user("stranger")
    api.add_member(owner, ws, editor, "editor")
    assert agent_save(api, ws, admitted(api, ws, owner), uuid.uuid4().hex).status_code == 200
    before = workspace_items(resources, ws)
    cases = [
        (editor, None, 403, "FORBIDDEN"),
        (stranger, None, 404, "WORKSPACE_NOT_FOUND"),
        (owner, "not-a-cursor", 400, "INVALID_REQUEST"),
        (owner, "eyJrIjogIkRPQyNWIzAwMDAwMDAwMDAwMSJ9", 400, "INVALID_REQUEST"),  # {"k": "DOC#V#000000000001"}
    ]
    got = []
    for user, cursor, _, _ in cases:
        answer = forget_all(api, user, ws, cursor)
        got.append((answer.status_code, answer.json().get("error", {}).get("code", answer.text)))
    assert got == [(status, code) for *_, status, code in cases]
    assert workspace_items(resources, ws) == before
