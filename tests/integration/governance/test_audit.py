"""The audit trail on the real stack: every write route and every agent write of a turn shows up with its
actor (and, for an agent, its turn's admission); no text anywhere in it; members see only their own; bad
queries are refused with stable codes and change nothing."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_entries import entry, fields
from tests.integration.entries.test_entry_tools import turn
from tests.integration.turns.test_turns import finish, start_turn
from tests.support import RUNTIME, Api, admission_headers, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration


def _audit(api: Api, user: str, ws: str, query: str = "") -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    cursor = ""
    while True:
        response = api.call("GET", f"/v1/workspaces/{ws}/audit?limit=100{query}{cursor}", user=user)
        assert response.status_code == 200, response.text
        page = response.json()
        events += page["events"]
        if page["nextCursor"] is None:
            return events
        cursor = f"&cursor={page['nextCursor']}"


def _told(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None, str]]:
    return [(e["kind"], e["op"], e["actor"], e["actorKind"]) for e in reversed(events)]


def test_every_write_route_and_agent_write_is_audited_without_text(
    api: Api, svc: Services, worker: Settings, resources: LocalResources
) -> None:
    marker = f"AUDITMARK{uuid.uuid4().hex[:10]}"
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    policy = {"mode": "auto", "expectedRevision": 0}
    assert api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json=policy).status_code == 200
    assert api.save(owner, ws, f"# Memory\n- {marker} one\n", 0).status_code == 200
    assert api.save(editor, ws, "# Memory\n- two\n", 1).status_code == 200
    purge = api.call("POST", f"/v1/workspaces/{ws}/memory/purge", user=owner, json={"line": f"- {marker} one"})
    assert purge.status_code == 200, purge.text
    assert api.call("PUT", f"/v1/workspaces/{ws}/retention", user=owner, json={"historyDays": 30}).status_code == 200
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=editor, json=entry(marker, body=f"{marker} body"))
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    moved = api.call(
        "PUT",
        f"/v1/workspaces/{ws}/entries/{entry_id}",
        user=editor,
        json=fields(marker, body="new body"),
        headers={"X-Base-Revision": "1"},
    )
    assert moved.status_code == 200, moved.text
    forgot = api.call("DELETE", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner, headers={"X-Base-Revision": "2"})
    assert forgot.status_code == 204, forgot.text
    session = api.key_session(owner, ws)
    assert api.call("DELETE", f"/v1/workspaces/{ws}/key-sessions/{session}", user=owner).status_code == 204

    turn_id = start_turn(
        api,
        owner,
        ws,
        f"conv-{uuid.uuid4().hex[:8]}",
        f"remember: - {marker} from the turn\nnote: {marker} note\nsave: {marker} | {marker} fact\nHello?",
        f"sess-{uuid.uuid4().hex[:8]}",
    )
    view = finish(worker, svc, turn_id)
    assert [o.ok for o in view.tool_outcomes] == [True, True, True]

    events = _audit(api, owner, ws)
    told = _told(events)
    assert told[:14] == [
        ("workspace", "created", owner, "person"),
        ("member", "editor", owner, "person"),
        ("consent", "ai-on", owner, "person"),
        ("policy", "auto", owner, "person"),
        ("document", "save", owner, "person"),
        ("document", "save", editor, "person"),
        ("document", "purge", owner, "person"),
        ("retention", "set", owner, "person"),
        ("entry", "created", editor, "person"),
        ("entry", "revised", editor, "person"),
        ("entry", "forgotten", owner, "person"),
        ("key-session", "opened", owner, "person"),
        ("key-session", "revoked", owner, "person"),
        ("turn", "admitted", owner, "person"),
    ]
    # The turn's three tool writes, in whatever order its rounds made them.
    assert sorted(told[14:]) == [
        ("document", "capture", owner, "agent"),
        ("entry", "created", owner, "agent"),
        ("notes", "written", owner, "agent"),
    ]
    by_kind = {(e["kind"], e["op"]): e for e in events}
    admitted = by_kind["turn", "admitted"]["admissionId"]
    assert admitted
    assert {e["admissionId"] for e in events if e["actorKind"] == "agent"} == {admitted}
    assert by_kind["document", "purge"]["targets"] == [{"kind": "document", "id": "1", "version": 1}]
    assert by_kind["entry", "forgotten"]["targets"][0]["id"] == entry_id

    # No text in the trail: not in the answers, not in the items, not even as a digest.
    digest = hashlib.sha256(marker.encode()).hexdigest()
    assert marker not in str(events)
    audit_items = [i for i in scan_all(resources) if i["pk"]["S"] == f"WS#{ws}" and i["sk"]["S"].startswith("AUDIT#")]
    assert len(audit_items) == len(events)
    assert [i for i in audit_items if marker.encode() in item_bytes(i) or digest.encode() in item_bytes(i)] == []

    # A member reads their own actions only; asking for another's is refused.
    assert {e["actor"] for e in _audit(api, editor, ws)} == {editor}
    refused = api.call("GET", f"/v1/workspaces/{ws}/audit?actor={owner}", user=editor)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "FORBIDDEN")
    assert _told(_audit(api, owner, ws, f"&actor={editor}&kind=entry")) == [
        ("entry", "created", editor, "person"),
        ("entry", "revised", editor, "person"),
    ]
    stranger = api.call("GET", f"/v1/workspaces/{ws}/audit", user=new_user("stranger"))
    assert (stranger.status_code, stranger.json()["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")


@pytest.mark.parametrize(
    "query",
    [
        "since=yesterday",
        "until=2026-13-01T00:00:00Z",
        "since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z",
        "kind=gossip",
        "limit=0",
        "limit=101",
        "cursor=%25%25%25",
        "actor=",
    ],
)
def test_bad_audit_queries_are_refused_and_change_nothing(api: Api, resources: LocalResources, query: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    before = sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"]))
    response = api.call("GET", f"/v1/workspaces/{ws}/audit?{query}", user=owner)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "INVALID_REQUEST"), query
    assert sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"])) == before


def test_the_other_write_routes_are_audited_too(api: Api, svc: Services, worker: Settings) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    assert api.save(owner, ws, "# Memory\n- one\n", 0).status_code == 200
    proposal = {"proposal": {"edits": [{"op": "add", "line": "- two"}], "baseVersion": 1, "clearGeneration": 0}}
    applied = api.call(
        "POST",
        f"/v1/workspaces/{ws}/memory/proposals/apply",
        user=editor,
        json=proposal,
        headers={"X-Base-Version": "1"},
    )
    assert applied.status_code == 200, applied.text
    assert api.clear(owner, ws, 2).status_code == 200
    assert api.undo(editor, ws, 2, 3).status_code == 200
    made = api.call("POST", f"/v1/workspaces/{ws}/entries", user=editor, json=entry("Deploys"))
    entry_id = made.json()["entryId"]
    changed = fields("Deploys", body="Tuesdays")
    api.call(
        "PUT", f"/v1/workspaces/{ws}/entries/{entry_id}", user=editor, json=changed, headers={"X-Base-Revision": "1"}
    )
    reverted = api.call(
        "POST",
        f"/v1/workspaces/{ws}/entries/{entry_id}/revert",
        user=owner,
        json={"revision": 1},
        headers={"X-Base-Revision": "2"},
    )
    assert reverted.status_code == 200, reverted.text
    at_three = {"X-Base-Revision": "3"}
    for user, method, mark in ((editor, "PUT", "pin"), (owner, "DELETE", "pin"), (editor, "POST", "verify")):
        marked = api.call(method, f"/v1/workspaces/{ws}/entries/{entry_id}/{mark}", user=user, headers=at_three)
        assert marked.status_code == 200, marked.text
    private = entry("Mine", body="my own", scope="member")
    assert api.call("POST", f"/v1/workspaces/{ws}/entries", user=editor, json=private).status_code == 201
    wiped = api.call("DELETE", f"/v1/workspaces/{ws}/members/{editor}/entries", user=owner)
    assert wiped.status_code == 200, wiped.text
    # Two agent proposals in read_only, one accepted and one rejected.
    policy = {"mode": "read_only", "expectedRevision": 0}
    assert api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json=policy).status_code == 200
    assert turn(api, svc, worker, owner, ws, "save: First | the first proposal\nOk?").tool_outcomes
    assert turn(api, svc, worker, owner, ws, "save: Second | the second proposal\nOk?").tool_outcomes
    candidates = api.call("GET", f"/v1/workspaces/{ws}/candidates", user=owner).json()["candidates"]
    by_summary = {c["summary"]: c["candidateId"] for c in candidates}
    accept = api.call(
        "POST",
        f"/v1/workspaces/{ws}/candidates/{by_summary['the first proposal']}/accept",
        user=owner,
        json={"revision": 1},
    )
    assert accept.status_code == 200, accept.text
    reject = api.call(
        "POST",
        f"/v1/workspaces/{ws}/candidates/{by_summary['the second proposal']}/reject",
        user=owner,
        json={"revision": 1},
    )
    assert reject.status_code == 204, reject.text
    swept = api.call("DELETE", f"/v1/workspaces/{ws}/agent-memories", user=owner)  # the accepted agent entry
    assert (swept.status_code, swept.json()["forgotten"]) == (200, 1), swept.text

    told = _told(_audit(api, owner, ws))
    assert told[2:] == [
        ("consent", "ai-on", owner, "person"),
        ("document", "save", owner, "person"),
        ("document", "save", editor, "person"),
        ("document", "clear", owner, "person"),
        ("document", "undo", editor, "person"),
        ("entry", "created", editor, "person"),
        ("entry", "revised", editor, "person"),
        ("entry", "revised", owner, "person"),
        ("entry", "pinned", editor, "person"),
        ("entry", "unpinned", owner, "person"),
        ("entry", "verified", editor, "person"),
        ("entry", "created", editor, "person"),
        ("entry", "forgotten", owner, "person"),
        ("policy", "read_only", owner, "person"),
        ("turn", "admitted", owner, "person"),
        ("candidate", "proposed", owner, "agent"),
        ("turn", "admitted", owner, "person"),
        ("candidate", "proposed", owner, "agent"),
        ("candidate", "accepted", owner, "person"),
        ("candidate", "rejected", owner, "person"),
        ("entry", "forgotten", owner, "person"),
    ]

    # Deleting the workspace: its tombstone's event is written with it (and purged with everything else).
    gone = api.call("DELETE", f"/v1/workspaces/{ws}", user=owner, headers={"X-Confirm-Workspace": ws})
    assert gone.status_code == 202, gone.text
    newest = svc.table.query(f"WS#{ws}", "AUDIT#", limit=1, newest_first=True)
    assert [(i["kind"], i["op"], i["actor"]) for i in newest] == [("workspace", "deleted", owner)]


def test_an_agent_runtime_under_a_key_session_is_audited_as_its_agent(api: Api) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    policy = {"mode": "auto", "expectedRevision": 0}
    assert api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json=policy).status_code == 200
    made = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=entry("Deploys"))
    entry_id = made.json()["entryId"]
    session = api.key_session(owner, ws)
    sid = f"sess-{uuid.uuid4().hex[:8]}"
    admitted = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, owner, session, sessionId=sid)
    assert admitted.status_code == 201, admitted.text
    headers = admission_headers(admitted.json())
    notes = api.call(
        "PUT",
        f"/v1/automation/sessions/{sid}/notes",
        automation=RUNTIME,
        json={"notes": "check the canary"},
        headers={**headers, "X-Expected-Revision": "0"},
    )
    assert notes.status_code == 200, notes.text
    cleared = api.call("DELETE", f"/v1/automation/sessions/{sid}/notes", automation=RUNTIME, headers=headers)
    assert cleared.status_code == 200, cleared.text
    forget = api.call(
        "POST",
        f"/v1/automation/workspaces/{ws}/entries/{entry_id}/forget",
        automation=RUNTIME,
        headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
    )
    assert forget.status_code == 200, forget.text
    document = "# Team\n- deploys on Fridays\n"
    assert api.save(owner, ws, document, 0).status_code == 200
    read = {"kind": "document-version", "ref": "1", "sha256": hashlib.sha256(document.encode()).hexdigest()}
    verify = api.call(
        "POST",
        f"/v1/automation/workspaces/{ws}/entries/{entry_id}/verify",
        automation=RUNTIME,
        json={"revision": 1, "evidence": [read]},
        headers=headers,
    )
    assert verify.status_code == 200, verify.text

    events = _audit(api, owner, ws)
    agent = [e for e in reversed(events) if e["admissionId"] == admitted.json()["admissionId"]]
    assert [(e["kind"], e["op"], e["actor"], e["actorKind"], e["keySessionId"]) for e in agent] == [
        ("turn", "admitted", owner, "person", session),  # the runtime's admission, under the owner's session
        ("notes", "written", owner, "agent", None),  # its notes, then their deletion (a new empty revision)
        ("notes", "written", owner, "agent", None),
        ("candidate", "proposed", owner, "agent", session),  # forget_memory: a proposal, never a forget
        ("entry", "verified", owner, "agent", session),  # verify_memory, on the document version it read
    ]


COVERED = {
    "POST /v1/workspaces",
    "PUT /v1/workspaces/{ws}/members/{userId}",
    "PUT /v1/workspaces/{ws}/ai",
    "POST /v1/workspaces/{ws}/key-sessions",
    "DELETE /v1/workspaces/{ws}/key-sessions/{keySessionId}",
    "DELETE /v1/workspaces/{ws}",
    "PUT /v1/workspaces/{ws}/memory/policy",
    "PUT /v1/workspaces/{ws}/memory",
    "POST /v1/workspaces/{ws}/memory/clear",
    "POST /v1/workspaces/{ws}/memory/undo",
    "POST /v1/workspaces/{ws}/memory/proposals/apply",
    "POST /v1/workspaces/{ws}/memory/purge",
    "PUT /v1/workspaces/{ws}/retention",
    "POST /v1/workspaces/{ws}/entries",
    "PUT /v1/workspaces/{ws}/entries/{entryId}",
    "DELETE /v1/workspaces/{ws}/entries/{entryId}",
    "POST /v1/workspaces/{ws}/entries/{entryId}/revert",
    "PUT /v1/workspaces/{ws}/entries/{entryId}/pin",
    "DELETE /v1/workspaces/{ws}/entries/{entryId}/pin",
    "POST /v1/workspaces/{ws}/entries/{entryId}/verify",
    "DELETE /v1/workspaces/{ws}/members/{userId}/entries",
    "DELETE /v1/workspaces/{ws}/agent-memories",
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/accept",
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/reject",
    # Pages (tests/integration/pages/test_pages.py::test_every_page_change_is_audited_with_ids_only).
    "POST /v1/workspaces/{ws}/pages",
    "PATCH /v1/workspaces/{ws}/pages/{pageId}",
    "DELETE /v1/workspaces/{ws}/pages/{pageId}",
    "PUT /v1/workspaces/{ws}/pages/{pageId}/entries/{entryId}",
    "DELETE /v1/workspaces/{ws}/pages/{pageId}/entries/{entryId}",
    "PUT /v1/workspaces/{ws}/page-categories",
    "POST /v1/conversations/{conv}/turns",
    # The turn's worker, through the automation routes: capture, save_memory, notes (the first test), and
    # save_memory in read_only (a candidate, the second).
    "PUT /v1/automation/workspaces/{ws}/memory",
    "PUT /v1/automation/workspaces/{ws}/entries",
    "PUT /v1/automation/sessions/{sid}/notes",
    # An agent runtime's own admission, its notes and a forget proposal (the third test).
    "POST /v1/automation/conversations/{conv}/admissions",
    "DELETE /v1/automation/sessions/{sid}/notes",
    "POST /v1/automation/workspaces/{ws}/entries/{entryId}/forget",
    "POST /v1/automation/workspaces/{ws}/entries/{entryId}/verify",
    # A member's erasure: requested by the route, completed by the workflow's last step (its events, with the
    # owner as actor and never the erased member, are checked in tests/integration/workspaces/test_erasure.py).
    "POST /v1/workspaces/{ws}/members/{userId}/erasure",
    "POST /v1/automation/workspaces/{ws}/erasures/{erasureId}/steps",
    # Requesting an export (its download, a GET, is audited too): tests/integration/export/test_exports.py.
    "POST /v1/workspaces/{ws}/exports",
    # An import: requested by the route, each batch applied and its completion by the workflow's steps, all with
    # the importing owner as actor (tests/integration/export/test_import.py).
    "POST /v1/workspaces/{ws}/imports",
    "POST /v1/automation/workspaces/{ws}/imports/{importId}/files",
    "POST /v1/automation/workspaces/{ws}/imports/{importId}/finish",
    # Consolidation's proposals, with the service as their proposer (and a person's decision on them):
    # tests/integration/consolidation/test_consolidation.py.
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/proposals",
    # The owner's opt-in and opt-out, and a run asked for now: tests/integration/workspaces/test_consolidation.py.
    "PUT /v1/workspaces/{ws}/consolidation",
    "POST /v1/workspaces/{ws}/consolidation/runs",
}
NOT_ACTIONS = {
    # The owner's reindex rewrites the search snapshot, a sealed cache of what the entries say: no memory changes
    # (tests/integration/search/test_reindex.py checks the entries unchanged).
    "POST /v1/workspaces/{ws}/search/reindex",
    # A read whose words (a person's name) travel in the body, never in a URL: it writes nothing
    # (tests/integration/workspaces/test_erasure.py checks the table unchanged).
    "POST /v1/workspaces/{ws}/mentions",
    # The deletion workflow's own steps: Deletes of a tombstoned workspace's items, audited by its tombstone.
    "POST /v1/automation/workspaces/{ws}/deletion/branch-key",
    "POST /v1/automation/workspaces/{ws}/deletion/batches",
    # The export workflow's own steps: its sealed files and its end, audited by the request and the download.
    "POST /v1/automation/workspaces/{ws}/exports/{exportId}/files",
    "POST /v1/automation/workspaces/{ws}/exports/{exportId}/finish",
    # A consolidation run's other steps write its run record (ids and counts), no memory: its proposals are the
    # events (tests/integration/consolidation/test_consolidation.py checks the entries unchanged by a run).
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/pairs",
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/finish",
}


def test_every_write_route_is_driven_by_an_audit_test() -> None:
    """A new write route fails here until a test above drives it and checks its event (or it is named as no
    action of its own, with why)."""
    from tests.unit.test_template import EXPECTED_ROUTES

    writes = {route for route in EXPECTED_ROUTES if not route.startswith(("GET ", "HEAD ", "OPTIONS "))}
    assert writes - NOT_ACTIONS == COVERED
