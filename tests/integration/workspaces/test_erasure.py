"""Erasing a member (issue 23; docs/architecture.md#erasing-a-member), end to end on the local stack: the real
gateway and handlers, moto's DynamoDB, branch keys, the Temporal dev server and the production worker.

After the erasure completes, no item of either table carries the member's id anywhere (keys, values, maps,
lists, attribute names); what was theirs alone is gone, and the receipt counts it kind by kind as the table
held it before; what the team shares keeps working under the pseudonym (history, entries, search). A worker
killed mid-erasure leaves an erasure that the next worker finishes with the very same receipt.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_entries import create, entry
from tests.integration.turn_support import codec_client, run, running_worker, worker_settings
from tests.integration.worker_support import nth_call, worker_killed_at
from tests.integration.workspaces.test_deletion import scan
from tests.support import Api, FunctionLogs, item_bytes, new_user
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.store.feed_images import rule_for
from workspace_memory.workspaces.erasure_contract import ErasureResult, erasure_workflow_id

pytestmark = pytest.mark.integration

RUNTIME = "runtime"


@dataclass(frozen=True)
class Team:
    ws: str
    owner: str
    member: str
    viewer: str
    shared_entry: str
    private_entry: str


def team(api: Api) -> Team:
    """A workspace where the member left something of every kind: document versions, a shared and a private
    entry, a key session, an admitted conversation with recall receipts, working notes and an agent's forget
    proposal (a candidate and a rate bucket)."""
    owner, member, viewer = new_user("owner"), new_user("leaver"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, member, "editor")
    api.add_member(owner, ws, viewer, "viewer")
    assert api.save(owner, ws, "# Team\n- one\n", 0).status_code == 200
    assert api.save(member, ws, "# Team\n- one\n- two\n", 1).status_code == 200
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    policy = api.call(
        "PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json={"mode": "auto", "expectedRevision": 0}
    )
    assert policy.status_code == 200, policy.text
    shared = create(api, member, ws, entry("Deploy day", body="We deploy on Fridays"))
    private = create(api, member, ws, entry("Mine", body="my own note", scope="member"))
    key_session = api.key_session(member, ws)
    conv, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    admitted = api.admit(conv, ws, member, key_session, key="k-1", automation=RUNTIME, sessionId=session)
    assert admitted.status_code == 201, admitted.text
    ids = admitted.json()
    headers = {"X-Admission-Id": ids["admissionId"], "X-Delivery-Credential": ids["credential"]}
    path = f"/v1/automation/workspaces/{ws}/memory?purpose=recall"
    recall = api.call("GET", path, automation=RUNTIME, headers=headers)
    assert recall.json()["status"] == "ok", recall.text
    notes = api.call(
        "PUT", f"/v1/automation/sessions/{session}/notes", automation=RUNTIME, headers=headers, json={"notes": "n"}
    )
    assert notes.status_code == 200, notes.text
    forget = api.call(
        "POST",
        f"/v1/automation/workspaces/{ws}/entries/{shared}/forget",
        automation=RUNTIME,
        headers={**headers, "Idempotency-Key": "forget-1"},
    )
    assert forget.json()["outcome"] == "proposal", forget.text
    return Team(ws, owner, member, viewer, shared, private)


ADMISSION_ID = re.compile(r"adm_[0-9a-f]{24}\.([A-Za-z0-9_-]+)")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _encoded_users(item: dict[str, Any]) -> list[bytes]:
    """What the admission ids the item holds encode (base64url JSON naming their user)."""
    found = (ADMISSION_ID.fullmatch(s) for s in _strings(item))
    return [base64.urlsafe_b64decode(m[1] + "=" * (-len(m[1]) % 4)) for m in found if m is not None]


def naming(resources: LocalResources, user: str) -> list[dict[str, Any]]:
    """Every item of either table with the user's id anywhere in it (keys, names, values, as bytes), or in
    an admission id it holds."""
    needle = user.encode("utf-8")

    def names(item: dict[str, Any]) -> bool:
        return needle in item_bytes(item) or any(needle in decoded for decoded in _encoded_users(item))

    tables = (resources.table_name, resources.key_store_table_name)
    return [item for table in tables for item in scan(resources, table) if names(item)]


def theirs_alone(resources: LocalResources, t: Team) -> Counter[str]:
    """What the receipt must count as deleted, read off the table before the erasure, kind by kind: the
    member's membership, notebooks and rate buckets (keyed by them), the key sessions they opened, their
    agents' candidates, their private entries, their conversations' items but the owner record (which
    stays, pseudonymized) and their admissions."""
    found: Counter[str] = Counter()
    items = scan(resources, resources.table_name)
    conversations = {
        i["pk"]["S"] for i in items if i["sk"]["S"] == "OWNER" and i.get("userId", {}).get("S") == t.member
    }
    for item in items:
        pk, sk = item["pk"]["S"], item["sk"]["S"]
        rule = rule_for(pk, sk)
        kind = "other" if rule is None else rule.kind
        value = {name: attribute.get("S") for name, attribute in item.items()}
        own = pk == f"WS#{t.ws}" and (
            t.member in sk.split("#")
            or (kind == "key-session" and value.get("openedBy") == t.member)
            or (kind == "entry-candidate" and value.get("proposedBy") == t.member)
            or (kind == "entry" and value.get("scopeOwner") == t.member)
        )
        conversation = pk in conversations and sk != "OWNER"
        admission = kind == "admission" and value.get("userId") == t.member and value.get("workspaceId") == t.ws
        if own or conversation or admission:
            found[kind] += 1
    return found


def erase(api: Api, user: str, ws: str, member: str, confirm: str | None) -> requests.Response:
    headers = {} if confirm is None else {"X-Confirm-Member": confirm}
    return api.call("POST", f"/v1/workspaces/{ws}/members/{member}/erasure", user=user, headers=headers)


def wait_for_erasure(settings: Settings, svc: Services, ws: str, erasure_id: str) -> ErasureResult:
    """The erasure workflow's result (a Temporal long poll, not a sleep)."""

    async def wait() -> ErasureResult:
        client = await codec_client(settings, svc.cipher)
        handle = client.get_workflow_handle(erasure_workflow_id(ws, erasure_id), result_type=ErasureResult)
        result: ErasureResult = await handle.result()
        return result

    return run(wait())


def receipt(api: Api, user: str, ws: str, erasure_id: str) -> requests.Response:
    return api.call("GET", f"/v1/workspaces/{ws}/erasures/{erasure_id}", user=user)


def test_an_erased_member_leaves_no_trace_and_the_team_keeps_its_memory(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    t = team(api)
    expected = theirs_alone(resources, t)
    assert {"member", "notes", "key-session", "entry-candidate", "entry", "receipt", "admission"} <= set(expected)
    assert naming(resources, t.member)

    with running_worker(worker_settings(settings, gateway_url)):
        accepted = erase(api, t.owner, t.ws, t.member, t.member)
        assert accepted.status_code == 202, accepted.text
        body = accepted.json()
        assert (body["status"], body["requestedBy"]) == ("running", t.owner)
        # From this answer on, the member is a stranger to the workspace.
        assert api.call("GET", f"/v1/workspaces/{t.ws}", user=t.member).status_code == 404
        wait_for_erasure(settings, svc, t.ws, body["erasureId"])

    # No item of either table carries the member's id, anywhere.
    assert naming(resources, t.member) == []
    done = receipt(api, t.owner, t.ws, body["erasureId"])
    assert done.status_code == 200, done.text
    got = done.json()
    assert (got["status"], got["pseudonym"], got["erasureId"]) == ("completed", body["pseudonym"], body["erasureId"])
    assert got["deleted"] == dict(sorted(expected.items()))
    assert got["pseudonymized"].get("document-version") == 1  # the member's Save
    assert got["pseudonymized"].get("audit", 0) > 0  # the audit trail names the pseudonym now
    assert t.member not in done.text

    # What the team shares keeps working, under the pseudonym.
    history = api.call("GET", f"/v1/workspaces/{t.ws}/memory/versions", user=t.owner)
    assert history.status_code == 200, history.text
    assert [v["author"] for v in history.json()["versions"]][:2] == [body["pseudonym"], t.owner]
    assert api.read(t.owner, t.ws)["content"] == "# Team\n- one\n- two\n"
    shared = api.call("GET", f"/v1/workspaces/{t.ws}/entries/{t.shared_entry}", user=t.viewer)
    assert shared.status_code == 200, shared.text
    assert shared.json()["author"] == body["pseudonym"]
    found = api.call("GET", f"/v1/workspaces/{t.ws}/search?q=deploy+Fridays", user=t.viewer)
    assert found.status_code == 200, found.text
    assert [r["entryId"] for r in found.json()["results"]][:1] == [t.shared_entry]
    private = api.call("GET", f"/v1/workspaces/{t.ws}/entries/{t.private_entry}", user=t.owner)
    assert private.status_code == 404
    audit = api.call("GET", f"/v1/workspaces/{t.ws}/audit?kind=erasure", user=t.owner)
    assert [(e["op"], e["actor"]) for e in audit.json()["events"]] == [("completed", t.owner), ("requested", t.owner)]

    # The receipt is the owner's (and the asker's, here the same): nobody else's, the erased member included.
    missing = receipt(api, t.owner, t.ws, "er_" + "0" * 24)
    assert missing.status_code == 404
    for user in (t.member, t.viewer, new_user()):
        other = receipt(api, user, t.ws, body["erasureId"])
        assert (other.status_code, other.content) == (404, missing.content)
    assert missing.json()["error"]["code"] == "ERASURE_NOT_FOUND"

    # Asked again, there is no such member any more.
    again = erase(api, t.owner, t.ws, t.member, t.member)
    assert (again.status_code, again.json()["error"]["code"]) == (404, "MEMBER_NOT_FOUND")


def test_a_member_erases_themself_and_may_read_their_own_receipt(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    owner, member = new_user("owner"), new_user("self")
    ws = api.workspace(owner)
    api.add_member(owner, ws, member, "editor")
    assert api.save(member, ws, "# Team\n- mine\n", 0).status_code == 200
    with running_worker(worker_settings(settings, gateway_url)):
        accepted = erase(api, member, ws, member, member)
        assert accepted.status_code == 202, accepted.text
        body = accepted.json()
        assert body["requestedBy"] == body["pseudonym"]  # not the member's id
        wait_for_erasure(settings, svc, ws, body["erasureId"])
    assert naming(resources, member) == []
    mine = receipt(api, member, ws, body["erasureId"])  # no longer a member, still the one who asked
    assert (mine.status_code, mine.json()["status"], mine.json()["deleted"]) == (200, "completed", {"member": 1})
    assert set(mine.json()["pseudonymized"]) == {"audit", "document-head", "document-version"}
    assert mine.json()["pseudonymized"]["document-version"] == 1


def test_refused_erasures_change_nothing(api: Api, resources: LocalResources) -> None:
    owner, editor, viewer = new_user("owner"), new_user("editor"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    api.add_member(owner, ws, viewer, "viewer")
    before = scan(resources, resources.table_name)
    refusals = [
        (erase(api, owner, ws, editor, None), 400, "CONFIRMATION_REQUIRED"),
        (erase(api, owner, ws, editor, viewer), 400, "CONFIRMATION_MISMATCH"),
        (erase(api, editor, ws, viewer, viewer), 403, "FORBIDDEN"),
        (erase(api, owner, ws, owner, owner), 409, "OWNER_NOT_ERASABLE"),
        (erase(api, owner, ws, "nobody-here", "nobody-here"), 404, "MEMBER_NOT_FOUND"),
        (erase(api, new_user(), ws, editor, editor), 404, "WORKSPACE_NOT_FOUND"),
    ]
    for response, status, code in refusals:
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    assert scan(resources, resources.table_name) == before


def test_an_erasure_interrupted_by_killing_the_worker_finishes_with_the_same_receipt(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    t = team(api)
    expected = theirs_alone(resources, t)
    queue = f"q-erase-crash-{uuid.uuid4().hex[:8]}"
    queued = settings.model_copy(update={"temporal_task_queue": queue})
    from workspace_memory.adapters.temporal_erasures import TemporalErasures
    from workspace_memory.workspaces.erasure import ErasureService

    started = ErasureService(svc.table, svc.clock, TemporalErasures(queued, svc.cipher)).erase(
        t.owner, t.ws, t.member, t.member
    )  # waits on its queue until the doomed worker polls it
    items_step = nth_call("/steps", 6)  # the sixth step: the first batch of the partition's items
    with worker_killed_at(resources, settings, gateway_url, queue, items_step):
        # The held step landed: its batch is gone and counted, though the worker will never hear of it.
        landed = svc.table.get(f"WS#{t.ws}", f"ERASURE#{started.erasure_id}")
        assert landed is not None
        assert landed["status"] == "running"
        assert landed["deleted#notes"] == 1  # the partition's first batch
    with running_worker(worker_settings(queued, gateway_url, queue)):
        wait_for_erasure(settings, svc, t.ws, started.erasure_id)
    assert naming(resources, t.member) == []
    done = receipt(api, t.owner, t.ws, started.erasure_id).json()
    assert (done["status"], done["deleted"]) == ("completed", dict(sorted(expected.items())))


def test_the_owner_finds_what_still_mentions_a_member_without_the_words_being_kept(
    api: Api, resources: LocalResources, function_logs: FunctionLogs
) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    name, mail = f"Lena Mark{uuid.uuid4().hex[:6]}", f"lena.{uuid.uuid4().hex[:6]}@example.com"
    assert api.save(owner, ws, f"# Team\n- ask {name.upper()} about deploys\n", 0).status_code == 200
    assert api.save(owner, ws, "# Team\n- nobody named\n", 1).status_code == 200
    named = create(api, editor, ws, entry("Contact", body=f"write to {mail.upper()}"))
    unnamed = create(api, editor, ws, entry("Deploys", body="Fridays"))
    # Another member's private entry is theirs: the owner's search does not read it.
    create(api, editor, ws, entry("Mine", body=f"{name} is me", scope="member"))
    terms = {"terms": [f"  lena   mark{name[-6:]} ", mail]}  # spacing and case as a person types them
    before = scan(resources, resources.table_name)

    with function_logs.captured() as logs:
        found = api.call("POST", f"/v1/workspaces/{ws}/mentions", user=owner, json=terms)
        assert found.status_code == 200, found.text
        assert found.json() == {
            "versions": [1],
            "entries": [{"entryId": named, "revision": 1}],
            "scanned": 4,
            "complete": True,
        }
        assert unnamed not in found.text
        refused = [
            (api.call("POST", f"/v1/workspaces/{ws}/mentions", user=editor, json=terms), 403, "FORBIDDEN"),
            (api.call("POST", f"/v1/workspaces/{ws}/mentions", user=owner, json={"terms": []}), 400, None),
            (api.call("POST", f"/v1/workspaces/{ws}/mentions", user=owner, json={"terms": ["ab"]}), 400, None),
            (api.call("POST", f"/v1/workspaces/{ws}/mentions", user=owner, json={"terms": ["   "]}), 400, None),
            (api.call("POST", f"/v1/workspaces/{ws}/mentions", user=new_user(), json=terms), 404, None),
        ]
        for response, status, code in refused:
            assert response.status_code == status, response.text
            assert code is None or response.json()["error"]["code"] == code
            assert name[-6:] not in response.text
    # Nothing was written, and neither word was logged.
    assert scan(resources, resources.table_name) == before
    assert name[-6:] not in logs.getvalue()
    assert mail.split("@")[0] not in logs.getvalue()
