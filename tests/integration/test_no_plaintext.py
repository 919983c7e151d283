"""Ciphertext everywhere, plaintext nowhere: table items, logs and errors never hold memory text."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from scripts.localstack.resources import LocalResources
from tests.support import Api, FunctionLogs, graft_ciphertext, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.errors import DecryptionFailed
from workspace_memory.store import keys
from workspace_memory.workspaces.access import ShareType

pytestmark = pytest.mark.integration


def test_marker_never_stored_or_logged(api: Api, resources: LocalResources, function_logs: FunctionLogs) -> None:
    with function_logs.captured() as logs:
        _exercise_and_check(api, resources, logs.getvalue)


def _exercise_and_check(api: Api, resources: LocalResources, logs: Callable[[], str]) -> None:
    marker = f"MARKER-{uuid.uuid4().hex}"
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, f"# Memory\n- {marker}\n", 0).status_code == 200
    assert api.save(owner, ws, f"# Memory\n- {marker} again\n", 1).status_code == 200
    undo = api.undo(owner, ws, 1, 2)
    assert undo.status_code == 200
    stale = api.save(owner, ws, f"stale {marker}", 1)
    assert stale.status_code == 409
    assert marker not in stale.text
    assert api.clear(owner, ws, 3).status_code == 200
    assert marker in api.call("GET", f"/v1/workspaces/{ws}/memory/versions/1", user=owner).text

    items = scan_all(resources)
    assert any(ws in item["pk"]["S"] for item in items)
    needle = marker.encode()
    leaking = [item["sk"]["S"] for item in items if needle in item_bytes(item)]
    assert leaking == []
    assert ws in logs()  # the handlers did log about this workspace...
    assert marker not in logs()  # ...but never its text


def test_ciphertext_moved_to_another_slot_fails_to_decrypt(svc: Services) -> None:
    owner = new_user("owner")
    ws_a = svc.access.create_workspace(owner, "a", ShareType.SHARED)
    ws_b = svc.access.create_workspace(owner, "b", ShareType.SHARED)
    svc.document.save(owner, ws_a, "alpha text", 0)
    svc.document.save(owner, ws_a, "alpha two", 1)
    svc.document.save(owner, ws_b, "bravo text", 0)

    graft_ciphertext(svc.table, keys.head(ws_a), keys.head(ws_b), headVersion=1)
    with pytest.raises(DecryptionFailed) as cross_workspace:
        svc.document.read(owner, ws_b)
    assert "workspace" in str(cross_workspace.value)

    graft_ciphertext(svc.table, keys.version(ws_a, 2), keys.version(ws_a, 1))
    with pytest.raises(DecryptionFailed) as cross_version:
        svc.document.read_version(owner, ws_a, 1)
    assert "version" in str(cross_version.value)


def test_moved_ciphertext_is_a_clear_http_error(api: Api, svc: Services) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.save(owner, ws, "one", 0)
    api.save(owner, ws, "two", 1)
    graft_ciphertext(svc.table, keys.version(ws, 2), keys.version(ws, 1))
    response = api.call("GET", f"/v1/workspaces/{ws}/memory/versions/1", user=owner)
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "DECRYPTION_FAILED"
    assert "two" not in response.text
