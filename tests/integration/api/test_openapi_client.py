"""The README's walkthrough through a client generated from the served OpenAPI document.

openapi-python-client generates the client offline into a tmp dir (never committed); the walkthrough then runs
through it against the local stack: required headers are required arguments, every answer parses into the
model its status documents, and every error answer carries a code the document lists for that status. If the
document drifts from what the handlers do, a call here fails to parse or to type-check its arguments.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.integration.turn_support import turn_result
from tests.support import Api, admission_headers, new_user
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration

PACKAGE = "wm_generated_client"
GENERATOR = Path(sys.executable).with_name("openapi-python-client")


class Generated:
    """The generated package: its operations by tag and name, its models, a client per dev identity."""

    def __init__(self, base_url: str, document: dict[str, Any]) -> None:
        self.base_url = base_url
        self.document = document
        self.models = importlib.import_module(f"{PACKAGE}.models")
        self._client = importlib.import_module(f"{PACKAGE}.client")

    def op(self, tag: str, name: str) -> Any:
        return importlib.import_module(f"{PACKAGE}.api.{tag}.{name}")

    def as_user(self, user: str) -> Any:
        """The local stack's dev auth for people (the JWT authorizer's stand-in): `Bearer dev:<user>`."""
        return self._client.AuthenticatedClient(base_url=self.base_url, token=f"dev:{user}", timeout=180.0)

    def as_runtime(self, name: str) -> Any:
        """The local stack's stand-in for SigV4 on `/v1/automation/*`: `Bearer automation:<name>`."""
        return self._client.AuthenticatedClient(base_url=self.base_url, token=f"automation:{name}", timeout=180.0)

    def call(self, tag: str, name: str, *args: Any, expect: int, **kwargs: Any) -> Any:
        """One operation, its status asserted; an error answer's code must be one its status documents."""
        response = self.op(tag, name).sync_detailed(*args, **kwargs)
        assert response.status_code == expect, (name, response.status_code, response.content)
        if int(response.status_code) >= 400:
            assert response.parsed.error.code in self.codes(name, int(response.status_code)), response.content
        return response.parsed

    def codes(self, operation_id: str, status: int) -> list[str]:
        for item in self.document["paths"].values():
            for operation in item.values():
                if operation["operationId"] == operation_id:
                    listed: list[str] = operation["responses"][str(status)].get("x-error-codes", [])
                    return listed
        raise LookupError(operation_id)


@pytest.fixture(scope="module")
def generated(gateway_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    """The client generated from `GET /v1/openapi.json` as the stack serves it, importable for this module."""
    out = tmp_path_factory.mktemp("generated-client")
    served = requests.get(f"{gateway_url}/v1/openapi.json", timeout=60)
    assert served.status_code == 200
    (out / "openapi.json").write_bytes(served.content)
    (out / "config.json").write_text(json.dumps({"package_name_override": PACKAGE, "post_hooks": []}))
    command = [str(GENERATOR), "generate", "--path", str(out / "openapi.json"), "--meta", "none"]
    command += ["--output-path", str(out / PACKAGE), "--config", str(out / "config.json")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stdout + run.stderr, run.stdout + run.stderr  # nothing of the document skipped
    sys.path.insert(0, str(out))
    try:
        yield Generated(gateway_url, served.json())
    finally:
        sys.path.remove(str(out))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def test_the_generated_client_types_one_schema_per_status(generated: Generated) -> None:
    """Issue 20: the generated return types repeated `ErrorOut | ErrorOut | GatewayMessage | GatewayMessage`."""
    source = Path(generated.op("memory", "save_memory").__file__).read_text(encoding="utf-8")
    answer = source.split("def sync_detailed(", 1)[1].split("]:", 1)[0].split("-> Response[", 1)[1]
    members = [member.strip() for member in answer.split("|")]
    assert members == sorted(set(members)) == ["CommitOut", "ErrorOut", "GatewayMessage", "GatewayOrErrorOut"]
    assert "x_base_version: str," in source  # a required argument, no longer `None | str | Unset`


def test_the_readme_walkthrough_through_the_generated_client(
    generated: Generated, worker: Settings, svc: Services
) -> None:
    """Fresh ids throughout, so it runs on a stack any other test has used; the turn is waited for, not polled."""
    m, g = generated.models, generated
    alice_id, bob_id = new_user("alice"), new_user("bob")
    alice, bob, runtime = g.as_user(alice_id), g.as_user(bob_id), g.as_runtime("runtime")

    assert g.call("workspaces", "health", client=alice, expect=200).status == "ok"
    body = m.CreateWorkspace(name="platform team", share_type=m.ShareType.SHARED)
    ws = g.call("workspaces", "create_workspace", client=alice, body=body, expect=201).workspace_id
    g.call("workspaces", "put_member", ws, bob_id, client=alice, body=m.PutMember(role=m.Role.EDITOR), expect=200)

    first = m.SaveDocument(content="# Platform\n- We deploy on Fridays\n")
    assert g.call("memory", "save_memory", ws, client=alice, body=first, x_base_version="0", expect=200).version == 1
    second = m.SaveDocument(content="# Platform\n- We deploy on Tuesdays\n")
    assert g.call("memory", "save_memory", ws, client=bob, body=second, x_base_version="1", expect=200).version == 2
    lost = m.SaveDocument(content="lost update")
    stale = g.call("memory", "save_memory", ws, client=alice, body=lost, x_base_version="1", expect=409)
    assert (stale.error.code, stale.current_version) == ("STALE_BASE_VERSION", 2)

    assert "Tuesdays" in g.call("memory", "read_memory", ws, client=bob, expect=200).content
    history = g.call("memory", "list_versions", ws, client=bob, limit=10, expect=200)
    assert [v.version for v in history.versions] == [2, 1]
    assert "Fridays" in g.call("memory", "read_version", ws, 1, client=bob, expect=200).content
    undone = g.call(
        "memory", "undo_memory", ws, client=alice, body=m.Undo(restore_version=1), x_base_version="2", expect=200
    )
    assert (undone.version, undone.restored_from) == (3, 1)

    g.call("workspaces", "set_ai", ws, client=alice, body=m.SetAi(enabled=True), expect=200)
    policy = m.SetPolicy(mode=m.Mode.AUTO, expected_revision=0)
    assert g.call("memory", "set_policy", ws, client=alice, body=policy, expect=200).policy_revision == 1
    scopes = [m.Scope.MEMORYREAD, m.Scope.MEMORYWRITE]
    ks = g.call(
        "workspaces",
        "open_key_session",
        ws,
        client=alice,
        body=m.OpenKeySession(ttl_seconds=3600, scopes=scopes),
        expect=201,
    )

    conv = f"conv-{uuid.uuid4().hex[:8]}"
    admit = m.Admit(workspace_id=ws, user_id=alice_id, idempotency_key="turn-1", key_session_id=ks.key_session_id)
    adm = g.call("automation", "admit", conv, client=runtime, body=admit, expect=201)
    recalled = g.call(
        "automation", "recall", ws, client=runtime, purpose="recall",
        x_admission_id=adm.admission_id, x_delivery_credential=adm.credential, expect=200,
    )  # fmt: skip
    assert (recalled.status, recalled.revision, recalled.memory_write) == (m.RecallStatus.OK, 3, m.MemoryWrite.COMMIT)
    edit = m.AddEdit(line="- Feature flags gate risky changes")
    capture = m.Capture(admission_id=adm.admission_id, credential=adm.credential, base_version=3, edits=[edit])
    key = f"memory:{adm.admission_id}"
    captured = g.call("automation", "capture", ws, client=runtime, body=capture, idempotency_key=key, expect=200)
    assert (captured.outcome, captured.version) == (m.Outcome.COMMITTED, 4)
    receipts = g.call("conversations", "memory_receipts", conv, client=alice, expect=200)
    assert [r.status for r in receipts.receipts] == [m.RecallStatus.OK]
    assert receipts.next_cursor is None

    assert g.call("memory", "clear_memory", ws, client=alice, x_base_version="4", expect=200).version == 5
    kept = g.call("memory", "get_policy", ws, client=alice, expect=200)
    assert (kept.mode, kept.policy_revision, kept.clear_generation) == (m.Mode.AUTO, 1, 1)

    message = "note: ask Bob about the release\nWhat is in my notes?"
    turn = m.StartTurn(workspace_id=ws, message=message, idempotency_key="t-1", session_id="s-1")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    started = g.call("conversations", "start_turn", conv, client=alice, body=turn, expect=202)
    turn_result(worker, svc.cipher, started.turn_id)  # the workflow's own result: a Temporal long poll
    view = g.call("conversations", "get_turn", conv, started.turn_id, client=alice, expect=200)
    assert view.status == m.TurnOutStatus.COMPLETED
    assert "ask Bob about the release" in (view.answer or "")


# -- the headers the document says are required ------------------------------------------------------------


def _required_headers(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (f"{method.upper()} {path}", parameter["name"])
        for path, item in document["paths"].items()
        for method, operation in item.items()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "header" and parameter.get("required")
    }


EXACT = {
    ("PUT /v1/workspaces/{ws}/memory", "x-base-version"): (428, "BASE_VERSION_REQUIRED"),
    ("POST /v1/workspaces/{ws}/memory/clear", "x-base-version"): (428, "BASE_VERSION_REQUIRED"),
    ("POST /v1/workspaces/{ws}/memory/undo", "x-base-version"): (428, "BASE_VERSION_REQUIRED"),
    ("POST /v1/workspaces/{ws}/memory/proposals/apply", "x-base-version"): (428, "BASE_VERSION_REQUIRED"),
    ("PUT /v1/workspaces/{ws}/entries/{entryId}", "x-base-revision"): (428, "BASE_REVISION_REQUIRED"),
    ("POST /v1/workspaces/{ws}/entries/{entryId}/revert", "x-base-revision"): (428, "BASE_REVISION_REQUIRED"),
    ("PUT /v1/workspaces/{ws}/entries/{entryId}/pin", "x-base-revision"): (428, "BASE_REVISION_REQUIRED"),
    ("DELETE /v1/workspaces/{ws}/entries/{entryId}/pin", "x-base-revision"): (428, "BASE_REVISION_REQUIRED"),
    ("POST /v1/workspaces/{ws}/entries/{entryId}/verify", "x-base-revision"): (428, "BASE_REVISION_REQUIRED"),
    ("PUT /v1/automation/workspaces/{ws}/memory", "idempotency-key"): (400, "INVALID_REQUEST"),
    ("DELETE /v1/workspaces/{ws}", "x-confirm-workspace"): (400, "CONFIRMATION_REQUIRED"),
    ("POST /v1/workspaces/{ws}/members/{userId}/erasure", "x-confirm-member"): (400, "CONFIRMATION_REQUIRED"),
}
"""What each absence answered before the document called the header required: the wire is unchanged."""


def test_each_required_header_absent_answers_its_own_code_and_changes_nothing(generated: Generated, api: Api) -> None:
    """Every (route, header) the document marks required, sent with everything else right but that header:
    a 4xx with a code the document lists for that status (never powertools' 422, never a 5xx), and nothing
    stored."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "# Memory\n- a line\n", 0).status_code == 200
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    leaver = new_user("leaver")
    api.add_member(owner, ws, leaver, "editor")
    entry = {"type": "fact", "title": "Deploys", "summary": "We deploy on Tuesdays", "scope": "workspace"}
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=entry)
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    session = f"s-{uuid.uuid4().hex[:8]}"
    admitted = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, owner, api.key_session(owner, ws), sessionId=session)
    assert admitted.status_code == 201, admitted.text
    adm = admitted.json()
    auth = {k.lower(): v for k, v in admission_headers(adm).items()}
    capture = {"admissionId": adm["admissionId"], "credential": adm["credential"], "baseVersion": 1}
    requests_by_route: dict[str, tuple[str, Any, dict[str, str]]] = {
        "PUT /v1/workspaces/{ws}/memory": ("/v1/workspaces/{ws}/memory", {"content": "x"}, {"x-base-version": "1"}),
        "POST /v1/workspaces/{ws}/memory/clear": ("/v1/workspaces/{ws}/memory/clear", None, {"x-base-version": "1"}),
        "POST /v1/workspaces/{ws}/memory/undo": (
            "/v1/workspaces/{ws}/memory/undo",
            {"restoreVersion": 1},
            {"x-base-version": "1"},
        ),
        "POST /v1/workspaces/{ws}/memory/proposals/apply": (
            "/v1/workspaces/{ws}/memory/proposals/apply",
            {"proposal": {"edits": [{"op": "add", "line": "- y"}], "baseVersion": 1, "clearGeneration": 0}},
            {"x-base-version": "1"},
        ),
        "PUT /v1/workspaces/{ws}/entries/{entryId}": (
            f"/v1/workspaces/{{ws}}/entries/{entry_id}",
            {"type": "fact", "title": "Deploys", "summary": "We deploy on Mondays"},
            {"x-base-revision": "1"},
        ),
        "POST /v1/workspaces/{ws}/entries/{entryId}/revert": (
            f"/v1/workspaces/{{ws}}/entries/{entry_id}/revert",
            {"revision": 1},
            {"x-base-revision": "1"},
        ),
        "PUT /v1/workspaces/{ws}/entries/{entryId}/pin": (
            f"/v1/workspaces/{{ws}}/entries/{entry_id}/pin",
            None,
            {"x-base-revision": "1"},
        ),
        "DELETE /v1/workspaces/{ws}/entries/{entryId}/pin": (
            f"/v1/workspaces/{{ws}}/entries/{entry_id}/pin",
            None,
            {"x-base-revision": "1"},
        ),
        "POST /v1/workspaces/{ws}/entries/{entryId}/verify": (
            f"/v1/workspaces/{{ws}}/entries/{entry_id}/verify",
            None,
            {"x-base-revision": "1"},
        ),
        "DELETE /v1/workspaces/{ws}": ("/v1/workspaces/{ws}", None, {"x-confirm-workspace": ws}),
        "POST /v1/workspaces/{ws}/members/{userId}/erasure": (
            f"/v1/workspaces/{{ws}}/members/{leaver}/erasure",
            None,
            {"x-confirm-member": leaver},
        ),
        "PUT /v1/automation/workspaces/{ws}/memory": (
            "/v1/automation/workspaces/{ws}/memory",
            {**capture, "edits": [{"op": "add", "line": "- y"}]},
            {"idempotency-key": f"memory:{adm['admissionId']}"},
        ),
        "GET /v1/automation/workspaces/{ws}/memory": (
            "/v1/automation/workspaces/{ws}/memory?purpose=recall",
            None,
            auth,
        ),
        "PUT /v1/automation/workspaces/{ws}/entries": (
            "/v1/automation/workspaces/{ws}/entries",
            {"type": "fact", "title": "t", "summary": "s"},
            {**auth, "idempotency-key": "k-1"},
        ),
        "GET /v1/automation/workspaces/{ws}/entries": ("/v1/automation/workspaces/{ws}/entries", None, auth),
        "GET /v1/automation/workspaces/{ws}/entries/{entryId}": (
            f"/v1/automation/workspaces/{{ws}}/entries/{entry_id}",
            None,
            auth,
        ),
        "POST /v1/automation/workspaces/{ws}/entries/{entryId}/forget": (
            f"/v1/automation/workspaces/{{ws}}/entries/{entry_id}/forget",
            None,
            {**auth, "idempotency-key": "k-2"},
        ),
        "POST /v1/automation/workspaces/{ws}/entries/{entryId}/verify": (
            f"/v1/automation/workspaces/{{ws}}/entries/{entry_id}/verify",
            {"revision": 1, "evidence": [{"kind": "document-version", "ref": "1", "sha256": "0" * 64}]},
            auth,
        ),
        "GET /v1/automation/workspaces/{ws}/search": ("/v1/automation/workspaces/{ws}/search?q=deploy", None, auth),
        "GET /v1/automation/sessions/{sid}/notes": (f"/v1/automation/sessions/{session}/notes", None, auth),
        "PUT /v1/automation/sessions/{sid}/notes": (f"/v1/automation/sessions/{session}/notes", {"notes": "n"}, auth),
        "DELETE /v1/automation/sessions/{sid}/notes": (f"/v1/automation/sessions/{session}/notes", None, auth),
    }
    required = _required_headers(generated.document)
    assert {route for route, _ in required} == set(requests_by_route)  # a new required header is driven here
    before = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()
    for route, header in sorted(required):
        method, _ = route.split(" ", 1)
        path, body, headers = requests_by_route[route]
        assert header in headers, (route, header)
        sent = {name: value for name, value in headers.items() if name != header}
        who = {"automation": "runtime"} if "/automation/" in route else {"user": owner}
        answer = api.call(method, path.format(ws=ws), json=body, headers=sent, **who)
        status, code = answer.status_code, answer.json()["error"]["code"]
        assert 400 <= status < 500, (route, header, answer.text)
        assert status != 422, (route, header)
        assert header in answer.json()["error"]["message"].lower(), (route, answer.text)  # refused for that header
        assert code in generated.codes(_operation_id(generated.document, route), status), (route, header, code)
        if (route, header) in EXACT:
            assert (status, code) == EXACT[route, header], (route, header)
    assert api.read(owner, ws)["version"] == 1
    assert api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json() == before
    assert api.call("GET", f"/v1/workspaces/{ws}", user=owner).status_code == 200  # not deleted


def _operation_id(document: dict[str, Any], route: str) -> str:
    method, path = route.split(" ", 1)
    operation_id: str = document["paths"][path][method.lower()]["operationId"]
    return operation_id
