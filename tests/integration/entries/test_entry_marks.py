"""Pinned and verified entries over HTTP on the local stack (decisions/0064): the agent's routes read a pinned
entry and are refused `ENTRY_PINNED` on every write over it, with no item changed (a scan of the workspace's
items before and after); a person still edits it; a verification shows on read and list and the next revision
drops it; every bad mark answers its stable code and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import admitted, agent_workspace, propose_forget, workspace_items
from tests.integration.entries.test_entries import create, entry, fields, supersede
from tests.support import RUNTIME, Api, admission_headers, new_user

pytestmark = pytest.mark.integration


def mark(api: Api, method: str, user: str, ws: str, entry_id: str, base: str | None, what: str = "pin") -> Any:
    headers = {} if base is None else {"X-Base-Revision": base}
    return api.call(method, f"/v1/workspaces/{ws}/entries/{entry_id}/{what}", user=user, headers=headers)


def save_over(api: Api, ws: str, admission: dict[str, Any], idempotency_key: str) -> Any:
    """The agent's save through the pinned chain's key (`ops/deploy-day`): a supersession, or a candidate over it."""
    body = {"type": "fact", "title": "Deploys", "summary": "Tuesdays", "key": "ops/deploy-day"}
    headers = {**admission_headers(admission), "Idempotency-Key": idempotency_key}
    return api.call("PUT", f"/v1/automation/workspaces/{ws}/entries", automation=RUNTIME, json=body, headers=headers)


def code(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json().get("error", {}).get("code", "")


@pytest.mark.parametrize("mode", ["auto", "read_only"])
def test_an_agent_reads_a_pinned_entry_and_every_write_over_it_is_refused(
    api: Api, resources: LocalResources, mode: str
) -> None:
    owner, ws = agent_workspace(api, mode)
    entry_id = create(api, owner, ws, entry(key="ops/deploy-day"))
    pinned = mark(api, "PUT", owner, ws, entry_id, "1")
    assert (pinned.status_code, pinned.json()) == (200, {"entryId": entry_id, "revision": 1, "pinned": True})
    admission = admitted(api, ws, owner)
    read = api.call(
        "GET",
        f"/v1/automation/workspaces/{ws}/entries/{entry_id}",
        automation=RUNTIME,
        headers=admission_headers(admission),
    )
    assert (read.status_code, read.json()["pinned"]) == (200, True)
    before = workspace_items(resources, ws)
    saved = save_over(api, ws, admission, "save-1")
    forgot = propose_forget(api, ws, admission, entry_id)
    assert [code(saved), code(forgot)] == [(409, "ENTRY_PINNED"), (409, "ENTRY_PINNED")]
    after = workspace_items(resources, ws)
    # the read bumped the head's advisory read count off its path: compare everything but the counts
    assert [_without_counts(i) for i in after] == [_without_counts(i) for i in before]


def _without_counts(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in {"readCount", "lastReadAt"}}


def test_a_candidate_from_before_the_pin_is_refused_until_unpinned(api: Api, resources: LocalResources) -> None:
    owner, ws = agent_workspace(api, "read_only")
    entry_id = create(api, owner, ws, entry(key="ops/deploy-day"))
    admission = admitted(api, ws, owner)
    proposed = save_over(api, ws, admission, "save-1")
    assert proposed.status_code == 200, proposed.text
    candidate = proposed.json()["candidateId"]
    assert mark(api, "PUT", owner, ws, entry_id, "1").status_code == 200
    before = workspace_items(resources, ws)
    accept = f"/v1/workspaces/{ws}/candidates/{candidate}/accept"
    refused = api.call("POST", accept, user=owner, json={"revision": 1})
    assert code(refused) == (409, "ENTRY_PINNED")
    assert workspace_items(resources, ws) == before
    assert mark(api, "DELETE", owner, ws, entry_id, "1").json()["pinned"] is False
    accepted = api.call("POST", accept, user=owner, json={"revision": 1})
    assert (accepted.status_code, accepted.json()["revision"]) == (200, 2)


def test_a_person_edits_a_pinned_entry_and_a_verification_lasts_until_the_next_revision(api: Api) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    entry_id = create(api, owner, ws, entry())
    assert mark(api, "PUT", owner, ws, entry_id, "1").status_code == 200
    verified = mark(api, "POST", editor, ws, entry_id, "1", "verify")
    assert verified.status_code == 200, verified.text
    assert (verified.json()["verifiedBy"], verified.json()["pinned"]) == (editor, True)
    read = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert (read["pinned"], read["verifiedBy"], read["verifiedAt"]) == (True, editor, verified.json()["verifiedAt"])
    (row,) = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()["entries"]
    assert (row["pinned"], row["verifiedBy"]) == (True, editor)
    assert supersede(api, editor, ws, entry_id, 1, fields(summary="Tuesdays")).status_code == 200
    read = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert (read["revision"], read["pinned"]) == (2, True)
    assert "verifiedAt" not in read
    assert "verifiedBy" not in read


def test_bad_marks_answer_their_code_and_change_nothing(api: Api, resources: LocalResources) -> None:
    owner, viewer = new_user("owner"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, viewer, "viewer")
    entry_id = create(api, owner, ws, entry())
    gone = create(api, owner, ws, entry("gone"))
    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{gone}", user=owner).status_code == 204
    cases = [
        ("PUT", owner, entry_id, None, "pin", 428, "BASE_REVISION_REQUIRED"),
        ("DELETE", owner, entry_id, None, "pin", 428, "BASE_REVISION_REQUIRED"),
        ("POST", owner, entry_id, None, "verify", 428, "BASE_REVISION_REQUIRED"),
        ("PUT", owner, entry_id, "2", "pin", 409, "STALE_REVISION"),
        ("POST", owner, entry_id, "2", "verify", 409, "STALE_REVISION"),
        ("PUT", owner, entry_id, "x", "pin", 400, "INVALID_REQUEST"),
        ("PUT", viewer, entry_id, "1", "pin", 403, "FORBIDDEN"),
        ("POST", viewer, entry_id, "1", "verify", 403, "FORBIDDEN"),
        ("PUT", owner, "en_" + "0" * 24, "1", "pin", 404, "ENTRY_NOT_FOUND"),
        ("PUT", owner, gone, "1", "pin", 410, "ENTRY_FORGOTTEN"),
    ]
    before = workspace_items(resources, ws)
    got = [code(mark(api, method, user, ws, target, base, what)) for method, user, target, base, what, _, _ in cases]
    assert got == [(status, error) for *_, status, error in cases]
    assert workspace_items(resources, ws) == before
