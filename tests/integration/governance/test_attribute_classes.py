"""Every attribute of every item kind is an id, an enumeration, a number, a timestamp, a hash or sealed bytes
(decisions/0055): the real stack over HTTP is driven through every item kind the service writes, with free
text an agent or a person sent (an e-mail, a phone number, a token) in the reason, the refs and the agent
name, and the whole table (moto) is then judged by `store/attributes`. Attack tests: that free text is in no
attribute in clear, is redacted or refused where it is served, and a refusal changes nothing."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_agent_entry_api import admitted, agent_save, agent_workspace, workspace_items
from tests.integration.export.import_support import minimal_archive
from tests.integration.search.test_search_snapshot import cold
from tests.support import RUNTIME, Api, FunctionLogs, admission_headers, new_user, scan_all
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import attribute_forms, attributes

pytestmark = pytest.mark.integration

EMAIL = "jane.doe@example.com"
PHONE = "+1 415 555 0100"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
BOUND_PREFIX = f"clients/acme{uuid.uuid4().hex[:8]}"
"""A bound key session's key prefix: an entry key may hold what a person wrote, so it is sealed (decisions/0077)."""
FREE_TEXT = (EMAIL, PHONE, GITHUB_TOKEN, AWS_KEY_ID, BOUND_PREFIX)
SHA = "0" * 64
_deserialize = TypeDeserializer().deserialize


def plain(value: Any) -> Any:
    """A wire attribute as the in-memory table holds it (bytes for a binary)."""
    return _bytes(_deserialize(value))


def _bytes(value: Any) -> Any:
    if isinstance(value, Binary):
        raw: bytes = getattr(value, "value")  # noqa: B009 - the stubs do not declare it
        return raw
    if isinstance(value, dict):
        return {k: _bytes(v) for k, v in value.items()}
    if isinstance(value, list | set):
        return [_bytes(v) for v in value]
    return value


def items(resources: LocalResources) -> list[dict[str, Any]]:
    return [{name: plain(value) for name, value in item.items()} for item in scan_all(resources)]


def clear_strings(item: dict[str, Any]) -> str:
    """Every string of an item that is not sealed bytes, nested ones included."""

    def walk(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [s for k, v in value.items() for s in (k, *walk(v))]
        if isinstance(value, list):
            return [s for v in value for s in walk(v)]
        return [] if isinstance(value, bytes) else [str(value)]

    return "\n".join(walk(item))


def create_entry(api: Api, user: str, ws: str, **fields: Any) -> Any:
    body = {"type": "fact", "scope": "workspace", "title": "Deploys", "summary": "deploy day", **fields}
    return api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=body)


def supersede(api: Api, user: str, ws: str, entry_id: str, base: int, **fields: Any) -> Any:
    body = {"type": "fact", "title": "Deploys", "summary": "deploy day", "body": "Tuesdays", **fields}
    headers = {"X-Base-Revision": str(base)}
    return api.call("PUT", f"/v1/workspaces/{ws}/entries/{entry_id}", user=user, json=body, headers=headers)


def drive_every_item_kind(api: Api, svc: Services) -> tuple[str, str]:
    """Documents, versions, members, policy, key sessions and their revocation, admissions, credential slots,
    receipts, captures, notes, entries (every scope), revisions, key slots, counters, the key secret, agent
    writes (their idempotency rows and rate), candidates, search snapshots, forgetting, an export and one of its
    files, pages (a filing, a private page, categories) and a deleted workspace: the owner and workspace."""
    owner, ws = agent_workspace(api, "auto")
    editor = new_user("editor")
    api.add_member(owner, ws, editor, "editor")
    assert api.save(owner, ws, "# Memory\n- deploys on Fridays\n", 0).status_code == 200
    assert api.save(owner, ws, "# Memory\n- deploys on Tuesdays\n", 1).status_code == 200
    assert api.undo(owner, ws, 1, 2).status_code == 200
    revoked = api.key_session(owner, ws)
    bind = {"scopes": ["workspace"], "types": ["fact"], "keyPrefixes": ["ops/", BOUND_PREFIX]}  # decisions/0077
    bound = api.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=owner, json={"bind": bind})
    assert bound.status_code == 201, bound.text
    assert api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{revoked}", user=owner).status_code == 204

    sid = f"sess-{uuid.uuid4().hex[:8]}"
    key_session = api.key_session(owner, ws)
    admission = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, owner, key_session, sessionId=sid).json()
    headers = admission_headers(admission)
    recall = api.call(
        "GET", f"/v1/automation/workspaces/{ws}/memory?purpose=recall", automation=RUNTIME, headers=headers
    )
    assert recall.status_code == 200, recall.text
    capture = {**{k: admission[k] for k in ("admissionId", "credential")}, "baseVersion": 3}
    capture["edits"] = [{"op": "add", "line": f"- call {PHONE}", "heading": "# Memory"}]
    captured = api.call(
        "PUT",
        f"/v1/automation/workspaces/{ws}/memory",
        automation=RUNTIME,
        json=capture,
        headers={"Idempotency-Key": f"memory:{admission['admissionId']}"},
    )
    assert captured.status_code == 200, captured.text
    notes = api.call(
        "PUT",
        f"/v1/automation/sessions/{sid}/notes",
        automation=RUNTIME,
        json={"notes": f"mail {EMAIL} about deploys"},
        headers=headers,
    )
    assert notes.status_code == 200, notes.text

    cited = create_entry(api, owner, ws, key="ops/deploys", body="Fridays").json()["entryId"]
    sources = [{"kind": "entry", "ref": cited, "sha256": SHA, "locator": f"ask {EMAIL}"}]
    assert create_entry(api, owner, ws, scope="agent", agent="planner", sources=sources).status_code == 201
    assert create_entry(api, editor, ws, scope="member", title="mine").status_code == 201
    moved = supersede(api, owner, ws, cited, 1, reason=f"moved, ask {EMAIL} or {PHONE}")
    assert moved.status_code == 200, moved.text
    assert api.call("GET", f"/v1/workspaces/{ws}/entries/{cited}", user=editor).status_code == 200
    assert api.call("GET", f"/v1/workspaces/{ws}/search?q=deploys", user=editor).status_code == 200

    agent = admitted(api, ws, owner)
    body = {"type": "fact", "title": "Deploys", "summary": "deploy day", "body": f"mail {EMAIL}", "key": "ops/deploys"}
    write = {**admission_headers(agent), "Idempotency-Key": uuid.uuid4().hex}
    path = f"/v1/automation/workspaces/{ws}/entries"
    saved = api.call("PUT", path, automation=RUNTIME, json=body, headers=write)
    assert saved.status_code == 200, saved.text
    forget = api.call(
        "POST",
        f"/v1/automation/workspaces/{ws}/entries/{cited}/forget",
        automation=RUNTIME,
        headers={**admission_headers(agent), "Idempotency-Key": uuid.uuid4().hex},
    )
    assert forget.status_code in (200, 201, 202), forget.text
    gone = create_entry(api, owner, ws, title="gone", sources=sources).json()["entryId"]  # its forget blocks it
    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{gone}", user=owner).status_code == 204
    # a forget dropped any snapshot, and the stack stores one past 50 revisions: a cold search service (the
    # real code, cipher and table) stores this workspace's
    cold(svc, 0).search(owner, ws, "deploys", 5)

    proposing_owner, proposing = agent_workspace(api, "read_only")
    proposal = agent_save(api, proposing, admitted(api, proposing, proposing_owner), uuid.uuid4().hex)
    assert proposal.status_code in (200, 202), proposal.text

    erasing, leaver = api.workspace(owner), new_user("leaver")
    api.add_member(owner, erasing, leaver, "editor")
    erase = {"X-Confirm-Member": leaver}
    path = f"/v1/workspaces/{erasing}/members/{leaver}/erasure"
    assert api.call("POST", path, user=owner, headers=erase).status_code == 202  # the erasure's record
    # an export (decisions/0068) and one file of it, written as its workflow's step would (no worker here)
    exported = api.call("POST", f"/v1/workspaces/{ws}/exports", user=owner, json={"scope": "workspace"})
    assert exported.status_code == 202, exported.text
    export_path = f"/v1/automation/workspaces/{ws}/exports/{exported.json()['exportId']}/files"
    written = api.call("POST", export_path, automation=RUNTIME, json={"file": "entries.json"})
    assert written.status_code == 200, written.text
    # a consolidation run's record (decisions/0086), its steps called as its workflow would (no worker here)
    run_path = f"/v1/automation/workspaces/{ws}/consolidation/runs/cr_{uuid.uuid4().hex[:24]}"
    paired = api.call("POST", f"{run_path}/pairs", automation=RUNTIME, json={"trigger": "owner"})
    assert paired.status_code == 200, paired.text
    finished = api.call("POST", f"{run_path}/finish", automation=RUNTIME, json=paired.json()["counts"])
    assert finished.status_code == 200, finished.text
    # the owner's consolidation settings (decisions/0088), written off as they were: no schedule made
    settings_path = f"/v1/workspaces/{ws}/consolidation"
    opt_out: dict[str, object] = {"enabled": False, "autoFile": False, "expectedRevision": 0}
    assert api.call("PUT", settings_path, user=owner, json=opt_out).status_code == 200
    # an import (decisions/0069) into a new workspace: its record and staged files (no worker applies them)
    target = api.workspace(owner)
    minimal = minimal_archive(svc.cipher, owner, ws)
    imported = api.call("POST", f"/v1/workspaces/{target}/imports", user=owner, json=minimal)
    assert imported.status_code == 202, imported.text

    # pages (decisions/0085): the owner's categories, a workspace page with a filing, a member's private page
    categories = {"categories": ["clients"], "revision": 0}
    assert api.call("PUT", f"/v1/workspaces/{ws}/page-categories", user=owner, json=categories).status_code == 200
    page = {"category": "clients", "title": f"ask {EMAIL}", "notes": f"call {PHONE}"}
    page_id = api.call("POST", f"/v1/workspaces/{ws}/pages", user=owner, json=page).json()["pageId"]
    filed_entry = create_entry(api, owner, ws, title="filed").json()["entryId"]
    filing = api.call(
        "PUT", f"/v1/workspaces/{ws}/pages/{page_id}/entries/{filed_entry}", user=owner, json={"revision": 1}
    )
    assert filing.status_code == 200, filing.text
    private_page = {"scope": "private", "category": "you", "title": f"mail {EMAIL}"}
    assert api.call("POST", f"/v1/workspaces/{ws}/pages", user=editor, json=private_page).status_code == 201

    named = api.call("POST", "/v1/workspaces", user=owner, json={"name": f"ask {EMAIL}", "shareType": "private"})
    assert named.status_code == 201, named.text  # a name is free text its owner types (decisions/0072)
    deleted = api.workspace(owner)
    confirm = {"X-Confirm-Workspace": deleted}
    assert api.call("DELETE", f"/v1/workspaces/{deleted}", user=owner, headers=confirm).status_code in (200, 202, 204)
    return owner, ws


@pytest.mark.timeout(900)  # one drive through every item kind: a few minutes on a loaded machine
def test_every_attribute_of_every_item_is_of_its_declared_class(
    api: Api, resources: LocalResources, function_logs: FunctionLogs, settings: Settings
) -> None:
    """One drive (it is slow), judged twice: every attribute by its declared class, and the free text the
    drive sent in no clear attribute and no log."""
    with function_logs.captured() as logs:
        drive_every_item_kind(api, build_services(settings))
    stored = items(resources)

    found = sorted({v for item in stored for v in attributes.violations(item)})
    assert found == [], "\n".join(found)
    kinds = {k.name for item in stored if (k := attributes.kind_of(item["pk"], item["sk"])) is not None}
    expected = {k.name for k in attributes.KINDS}
    assert expected - kinds == set()  # the drive reached every declared kind
    clear = {
        (kind.name, name)
        for item in stored
        if (kind := attributes.kind_of(item["pk"], item["sk"])) is not None
        for name in item
        if kind.form(name) is attribute_forms.CLEAR_TEXT
    }
    assert clear == set(attributes.FINDINGS)
    leaking = [(item["sk"], t) for item in stored for t in FREE_TEXT if t in clear_strings(item)]
    assert leaking == []
    assert [t for t in FREE_TEXT if t in logs.getvalue()] == []


def test_a_reason_with_an_email_is_sealed_and_served_to_its_reader(api: Api, resources: LocalResources) -> None:
    """A member's private entry superseded with a reason holding an e-mail: no attribute holds it (it is
    sealed in the new revision), the writer is warned, and history and `asOf` serve it decrypted."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    entry_id = create_entry(api, owner, ws, scope="member").json()["entryId"]
    moved = supersede(api, owner, ws, entry_id, 1, reason=f"ask {EMAIL}")
    assert moved.status_code == 200, moved.text
    assert moved.json()["warnings"] == [{"kind": "email", "count": 1}]
    revisions = [i for i in items(resources) if i["pk"] == f"WS#{ws}" and entry_id in i["sk"]]
    assert len(revisions) == 3  # the head and two revisions
    assert all("supersededReason" not in i for i in revisions)
    assert all(EMAIL not in clear_strings(i) for i in revisions)
    history = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}/history", user=owner).json()
    assert [r.get("supersededReason") for r in history["entries"]] == [None, f"ask {EMAIL}"]


def test_an_agents_reason_is_not_taken(api: Api, resources: LocalResources) -> None:
    """The agent's write has no reason: one sent is refused before anything is stored."""
    owner, ws = agent_workspace(api, "auto")
    admission = admitted(api, ws, owner)
    before = workspace_items(resources, ws)
    refused = agent_save(api, ws, admission, uuid.uuid4().hex, reason=f"ask {EMAIL}")
    assert refused.status_code == 400, refused.text
    assert EMAIL not in refused.text
    assert workspace_items(resources, ws) == before


@pytest.mark.parametrize("route", ["human", "agent"])
def test_a_source_ref_holding_a_token_is_refused_and_changes_nothing(
    api: Api, resources: LocalResources, route: str
) -> None:
    owner, ws = agent_workspace(api, "auto")
    admission = admitted(api, ws, owner)
    sources = [{"kind": "entry", "ref": GITHUB_TOKEN, "sha256": SHA}]
    before = workspace_items(resources, ws)
    if route == "human":
        refused = create_entry(api, owner, ws, sources=sources)
    else:
        refused = agent_save(api, ws, admission, uuid.uuid4().hex, sources=sources)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "INVALID_SOURCE_REF"
    assert GITHUB_TOKEN not in refused.text
    assert workspace_items(resources, ws) == before


@pytest.mark.parametrize("route", ["human", "agent"])
@pytest.mark.parametrize("agent", [AWS_KEY_ID, GITHUB_TOKEN.lower(), "Planner"])
def test_an_agent_name_that_is_a_secret_is_refused_and_changes_nothing(
    api: Api, resources: LocalResources, route: str, agent: str
) -> None:
    owner, ws = agent_workspace(api, "auto")
    admission = admitted(api, ws, owner)
    before = workspace_items(resources, ws)
    if route == "human":
        refused = create_entry(api, owner, ws, scope="agent", agent=agent)
    else:
        refused = agent_save(api, ws, admission, uuid.uuid4().hex, scope="agent", agent=agent)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "INVALID_AGENT_NAME"
    assert agent not in refused.text
    assert workspace_items(resources, ws) == before


def test_a_ref_of_its_declared_format_is_served_and_cited(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "# Memory\n- deploys on Fridays\n", 0).status_code == 200
    digest = hashlib.sha256(b"# Memory\n- deploys on Fridays\n").hexdigest()
    sources = [{"kind": "document-version", "ref": "1", "sha256": digest, "locator": ""}]
    entry_id = create_entry(api, owner, ws, sources=sources).json()["entryId"]
    read = api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).json()
    assert [(c["ref"], c["state"]) for c in read["citations"]] == [("1", "ok")]
