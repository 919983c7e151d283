"""`POST /v1/workspaces/{ws}/entries/{entryId}/revert` over HTTP on the local stack: Undo for an entry, and every
bad request answered with its stable code and no item changed (a scan of the table before and after)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.entries.test_entries import create, entry, fields, supersede
from tests.support import Api, item_bytes, new_user, scan_all

pytestmark = pytest.mark.integration


def revert(api: Api, user: str, ws: str, entry_id: str, body: Any, base: str | None) -> Any:
    headers = {} if base is None else {"X-Base-Revision": base}
    path = f"/v1/workspaces/{ws}/entries/{entry_id}/revert"
    return api.call("POST", path, user=user, json=body, headers=headers)


def test_revert_writes_revision_ones_text_as_revision_three(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    entry_id = create(api, owner, ws, entry(summary="on Fridays"))
    assert supersede(api, owner, ws, entry_id, 1, fields(summary="on Tuesdays")).status_code == 200
    answer = revert(api, owner, ws, entry_id, {"revision": 1}, "2")
    assert (answer.status_code, answer.json()) == (200, {"entryId": entry_id, "revision": 3, "possibleConflicts": []})
    read = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert (read["revision"], read["summary"], read["previously"]["summary"]) == (3, "on Fridays", "on Tuesdays")


def test_bad_reverts_answer_their_code_and_change_nothing(api: Api, resources: Any) -> None:
    owner, viewer = new_user("owner"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, viewer, "viewer")
    entry_id = create(api, owner, ws, entry(summary="on Fridays"))
    assert supersede(api, owner, ws, entry_id, 1, fields(summary="on Tuesdays")).status_code == 200
    cases = [
        (owner, entry_id, {"revision": 1}, None, 428, "BASE_REVISION_REQUIRED"),
        (owner, entry_id, {"revision": 1}, "1", 409, "STALE_REVISION"),
        (owner, entry_id, {"revision": 2}, "2", 400, "REVERT_TO_CURRENT"),
        (owner, entry_id, {"revision": 9}, "2", 404, "REVISION_NOT_FOUND"),
        (owner, entry_id, {"revision": 0}, "2", 400, "INVALID_REQUEST"),
        (owner, entry_id, {"revision": 1.5}, "2", 400, "INVALID_REQUEST"),
        (owner, entry_id, {}, "2", 400, "INVALID_REQUEST"),
        (owner, entry_id, {"revision": 1, "extra": True}, "2", 400, "INVALID_REQUEST"),
        (owner, "en_" + "0" * 24, {"revision": 1}, "2", 404, "ENTRY_NOT_FOUND"),
        (viewer, entry_id, {"revision": 1}, "2", 403, "FORBIDDEN"),
    ]
    before = sorted(item_bytes(i) for i in scan_all(resources))
    got = []
    for user, target, body, base, _, _ in cases:
        answer = revert(api, user, ws, target, body, base)
        got.append((answer.status_code, answer.json().get("error", {}).get("code", answer.text)))
    assert got == [(status, code) for *_, status, code in cases]
    assert sorted(item_bytes(i) for i in scan_all(resources)) == before
