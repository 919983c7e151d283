"""Deleting a workspace (issue 9, item 2; docs/architecture.md#deleting-a-workspace), end to end on the local stack: the
real gateway and handlers, moto's DynamoDB and KMS, branch keys, the Temporal dev server and the production worker.

After a deletion completes, no item of either table (MemoryTable, the branch-key store) names the workspace,
and a ciphertext copied out before no longer decrypts; a worker killed mid-purge leaves a deletion that the
next worker finishes; a second DELETE is harmless; a refused DELETE changes nothing; between the tombstone
and the end every route answers the 404 of a missing workspace, recall says `deleted`, capture is refused.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
import requests

from scripts.localstack.resources import LocalResources
from tests.integration.turn_support import codec_client, run, running_worker, worker_settings
from tests.integration.worker_support import holding_proxy, start_worker_process
from tests.support import Api, item_bytes, new_user
from workspace_memory.adapters.temporal_consolidation import TemporalWorkspaceRuns
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.document.versions import document_context
from workspace_memory.kernel.errors import DecryptionFailed
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.workspaces.deletion import DeletionService
from workspace_memory.workspaces.deletion_contract import DeletionResult, deletion_workflow_id

pytestmark = pytest.mark.integration

RUNTIME = "runtime"
SESSION = "sess-del"


@dataclass(frozen=True)
class Populated:
    ws: str
    owner: str
    editor: str
    viewer: str
    conv: str
    admission_id: str
    credential: str


def populate(api: Api, versions: int = 2) -> Populated:
    """A workspace with something of every kind: versions, members, policy, a key session, an admission with
    its credential slot, owner record and idempotency row, recall receipts, working notes and a capture."""
    owner, editor, viewer = new_user("owner"), new_user("editor"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    api.add_member(owner, ws, viewer, "viewer")
    for base in range(versions):
        saved = api.save(owner if base % 2 == 0 else editor, ws, f"# Team\n- fact {base}\n", base)
        assert saved.status_code == 200, saved.text
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0}
    )
    assert policy.status_code == 200, policy.text
    key_session = api.key_session(owner, ws)
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    admitted = api.admit(conv, ws, owner, key_session, key="k-1", automation=RUNTIME, sessionId=SESSION)
    assert admitted.status_code == 201, admitted.text
    p = Populated(ws, owner, editor, viewer, conv, admitted.json()["admissionId"], admitted.json()["credential"])
    assert recall(api, p).json()["status"] == "ok"
    notes = api.call(
        "PUT", f"/v1/automation/sessions/{SESSION}/notes", automation=RUNTIME, headers=admission(p), json={"notes": "n"}
    )
    assert notes.status_code == 200, notes.text
    assert capture(api, p, versions).json()["outcome"] == "committed"
    return p


def admission(p: Populated) -> dict[str, str]:
    return {"X-Admission-Id": p.admission_id, "X-Delivery-Credential": p.credential}


def recall(api: Api, p: Populated) -> requests.Response:
    path = f"/v1/automation/workspaces/{p.ws}/memory?purpose=recall"
    return api.call("GET", path, automation=RUNTIME, headers=admission(p))


def capture(api: Api, p: Populated, base: int) -> requests.Response:
    return api.call(
        "PUT",
        f"/v1/automation/workspaces/{p.ws}/memory",
        automation=RUNTIME,
        headers={"Idempotency-Key": f"memory:{p.admission_id}"},
        json={
            "admissionId": p.admission_id,
            "credential": p.credential,
            "baseVersion": base,
            "edits": [{"op": "add", "line": "- captured"}],
        },
    )


def delete(api: Api, user: str, ws: str, confirm: str | None) -> requests.Response:
    headers = {} if confirm is None else {"X-Confirm-Workspace": confirm}
    return api.call("DELETE", f"/v1/workspaces/{ws}", user=user, headers=headers)


def scan(resources: LocalResources, table: str) -> list[dict[str, Any]]:
    client = boto3.client("dynamodb", endpoint_url=resources.endpoint_url)
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table}
    while True:
        page = client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def naming(resources: LocalResources, ws: str) -> dict[str, list[dict[str, Any]]]:
    """The items of each table with the workspace id anywhere in their keys or values (strings or bytes)."""
    needle = ws.encode("utf-8")
    return {
        table: [item for item in scan(resources, table) if needle in item_bytes(item)]
        for table in (resources.table_name, resources.key_store_table_name)
    }


def both_tables(resources: LocalResources) -> list[list[dict[str, Any]]]:
    return [scan(resources, resources.table_name), scan(resources, resources.key_store_table_name)]


def wait_for_deletion(settings: Settings, svc: Services, ws: str) -> DeletionResult:
    """The deletion workflow's result (a Temporal long poll, not a sleep)."""

    async def wait() -> DeletionResult:
        client = await codec_client(settings, svc.cipher)
        result: DeletionResult = await client.get_workflow_handle(
            deletion_workflow_id(ws), result_type=DeletionResult
        ).result()
        return result

    return run(wait())


def test_a_completed_deletion_leaves_nothing_and_shreds_the_key(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    p = populate(api)
    version = svc.table.get(*keys.version(p.ws, 1))
    assert version is not None
    copied = bytes(version["ciphertext"])  # a ciphertext taken out before the deletion
    before = naming(resources, p.ws)
    assert len(before[resources.table_name]) >= 15  # the workspace's own partition and its conversation
    assert before[resources.key_store_table_name]

    with running_worker(worker_settings(settings, gateway_url)):
        accepted = delete(api, p.owner, p.ws, p.ws)
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["workspaceId"] == p.ws
        assert accepted.json()["status"] in ("running", "completed")
        result = wait_for_deletion(settings, svc, p.ws)

    # Everything it had, and the audit event of its own deletion (the tombstone's transaction wrote it).
    assert result.items_deleted == len(before[resources.table_name]) + 1
    assert naming(resources, p.ws) == {resources.table_name: [], resources.key_store_table_name: []}
    fresh = build_services(settings)  # a new process's view: no branch key cached
    with pytest.raises(DecryptionFailed):
        fresh.cipher.decrypt(copied, document_context(p.ws, 1))

    progress = api.call("GET", f"/v1/workspaces/{p.ws}/deletion", user=p.owner)
    assert progress.status_code == 200, progress.text
    body = progress.json()
    assert set(body) == {
        "workspaceId",
        "status",
        "phase",
        "itemsDeleted",
        "branchKeyDestroyed",
        "requestedAt",
        "completedAt",
    }
    assert (body["status"], body["phase"], body["itemsDeleted"], body["branchKeyDestroyed"]) == (
        "completed",
        "done",
        result.items_deleted,
        True,
    )
    assert body["completedAt"] is not None

    # Deleting twice is harmless: the same progress, nothing else happens.
    again = delete(api, p.owner, p.ws, p.ws)
    assert (again.status_code, again.json()) == (202, body)
    assert naming(resources, p.ws) == {resources.table_name: [], resources.key_store_table_name: []}

    # Anyone else reads the bytes of a workspace that never existed.
    missing = api.call("GET", f"/v1/workspaces/ws_{uuid.uuid4().hex}/deletion", user=p.owner)
    assert missing.status_code == 404
    for user in (p.editor, p.viewer, new_user()):
        other = api.call("GET", f"/v1/workspaces/{p.ws}/deletion", user=user)
        assert (other.status_code, other.content) == (404, missing.content)
    assert missing.json()["error"]["code"] == "WORKSPACE_NOT_FOUND"


def test_after_the_tombstone_every_route_is_a_missing_workspace(
    api: Api, svc: Services, settings: Settings, resources: LocalResources
) -> None:
    """No worker polls here, so the deletion stays between its tombstone and its purge."""
    p = populate(api)
    queue = f"q-tomb-{uuid.uuid4().hex[:8]}"
    runner = TemporalWorkspaceRuns(settings.model_copy(update={"temporal_task_queue": queue}), svc.cipher)
    service = DeletionService(svc.table, svc.key_store, svc.clock, runner, schedules=runner)
    progress = service.delete(p.owner, p.ws, p.ws)
    assert (progress.status, progress.items_deleted) == ("running", 0)
    # The branch key went at once, in the request: nothing of it is left in the key store.
    assert naming(resources, p.ws)[resources.key_store_table_name] == []

    ws = p.ws
    missing = f"ws_{uuid.uuid4().hex}"
    routes: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = [
        ("GET", "/memory", None, {}),
        ("PUT", "/memory", {"content": "after"}, {"X-Base-Version": "3"}),
        ("PUT", "/memory", {"content": "after"}, {"X-Base-Version": "0"}),
        ("POST", "/memory/clear", None, {"X-Base-Version": "3"}),
        ("POST", "/memory/undo", {"restoreVersion": 1}, {"X-Base-Version": "3"}),
        ("GET", "/memory/versions", None, {}),
        ("GET", "/memory/versions/1", None, {}),
        ("GET", "/memory/policy", None, {}),
        ("PUT", "/memory/policy", {"mode": "off", "expectedRevision": 1}, {}),
        ("PUT", "/ai", {"enabled": True}, {}),
        ("PUT", f"/members/{new_user()}", {"role": "viewer"}, {}),
        ("POST", "/key-sessions", {}, {}),
        ("DELETE", "/key-sessions/ks_00000000000000000000", None, {}),
    ]
    before = both_tables(resources)
    for method, suffix, body, headers in routes:
        for user in (p.owner, p.editor):
            got = api.call(method, f"/v1/workspaces/{ws}{suffix}", user=user, json=body, headers=headers)
            ref = api.call(method, f"/v1/workspaces/{missing}{suffix}", user=user, json=body, headers=headers)
            assert (method, suffix, got.status_code, got.content) == (method, suffix, 404, ref.content)
    turn = api.call(
        "POST",
        f"/v1/conversations/conv-{uuid.uuid4().hex[:8]}/turns",
        user=p.owner,
        json={"workspaceId": ws, "message": "hi", "idempotencyKey": "t-1"},
    )
    assert (turn.status_code, turn.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")
    receipts = api.call("GET", f"/v1/conversations/{p.conv}/memory-receipts", user=p.owner)
    assert (receipts.status_code, receipts.json()["error"]["code"]) == (404, "CONVERSATION_NOT_FOUND")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    readmit = api.admit(conv, ws, p.owner, "ks_00000000000000000000", key="k-2", automation=RUNTIME)
    assert (readmit.status_code, readmit.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")
    recalled = recall(api, p)
    assert recalled.status_code == 200, recalled.text
    assert (recalled.json()["status"], recalled.json()["revision"], recalled.json()["memoryWrite"]) == (
        "deleted",
        None,
        "none",
    )
    captured = capture(api, p, 3)
    assert captured.status_code == 200, captured.text
    assert captured.json()["outcome"] == "refused"
    notes = api.call("GET", f"/v1/automation/sessions/{SESSION}/notes", automation=RUNTIME, headers=admission(p))
    assert (notes.status_code, notes.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")
    assert both_tables(resources) == before  # nothing written: not a version, not a receipt, not a key

    # The former owner reads the progress; the purge waits for a worker on its queue.
    assert service.progress(p.owner, ws).phase == "started"


def test_a_refused_deletion_changes_nothing(api: Api, resources: LocalResources) -> None:
    p = populate(api)
    other = api.workspace(p.owner)
    before = both_tables(resources)
    cases = [
        (p.owner, None, 400, "CONFIRMATION_REQUIRED"),
        (p.owner, "", 400, "CONFIRMATION_REQUIRED"),
        (p.owner, other, 400, "CONFIRMATION_MISMATCH"),  # a header left over from another workspace
        (p.owner, p.ws.upper(), 400, "CONFIRMATION_MISMATCH"),
        (p.owner, f"{p.ws}0", 400, "CONFIRMATION_MISMATCH"),
        (p.editor, p.ws, 403, "FORBIDDEN"),
        (p.viewer, p.ws, 403, "FORBIDDEN"),
        (new_user(), p.ws, 404, "WORKSPACE_NOT_FOUND"),
    ]
    for user, confirm, status, code in cases:
        refused = delete(api, user, p.ws, confirm)
        assert (confirm, refused.status_code, refused.json()["error"]["code"]) == (confirm, status, code)
    assert both_tables(resources) == before
    assert recall(api, p).json()["status"] == "ok"
    assert api.read(p.owner, p.ws)["version"] == 3


def test_a_deletion_interrupted_by_killing_the_worker_finishes_on_restart(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    p = populate(api, versions=12)
    items = len(naming(resources, p.ws)[resources.table_name])
    queue = f"q-del-crash-{uuid.uuid4().hex[:8]}"
    queued = settings.model_copy(update={"temporal_task_queue": queue})
    runner = TemporalWorkspaceRuns(queued, svc.cipher)
    service = DeletionService(svc.table, svc.key_store, svc.clock, runner, batch_size=3, schedules=runner)
    service.delete(p.owner, p.ws, p.ws)
    items += 1  # the tombstone's transaction wrote its audit event
    held, release = threading.Event(), threading.Event()
    batches = iter(range(1, 1_000))

    def third_batch(method: str, path: str) -> bool:
        return path.endswith("/deletion/batches") and next(batches) == 3

    with holding_proxy(gateway_url, third_batch, held, release) as proxy:
        doomed = start_worker_process(resources, settings, proxy, queue)
        try:
            assert held.wait(timeout=120), "the third batch never reached the gateway"
            progress = service.progress(p.owner, p.ws)
            assert (progress.status, progress.phase, progress.items_deleted) == ("running", "purging", 6)
        finally:
            doomed.kill()
            doomed.wait(timeout=30)
        left = len(naming(resources, p.ws)[resources.table_name])
        assert 0 < left == items - 9  # three batches went, the last one unheard of by the dead worker
        release.set()
    with running_worker(worker_settings(queued, gateway_url, queue)):
        result = wait_for_deletion(settings, svc, p.ws)
    # The batch the dead worker never heard of is not counted: `itemsDeleted` is what the workflow saw done.
    assert result.items_deleted == items - 3
    assert naming(resources, p.ws) == {resources.table_name: [], resources.key_store_table_name: []}
    done = service.progress(p.owner, p.ws)
    assert (done.status, done.phase, done.items_deleted, done.branch_key_destroyed) == (
        "completed",
        "done",
        items - 3,
        True,
    )
