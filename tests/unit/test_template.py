"""template.yaml is the contract of the deployment: lint-clean, exactly the public routes with the right
authorizers, one event per route, the table and key as documented, and a worker that cannot touch the
table. No sockets: cfn-lint runs in-process on the file's text."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cfnlint.api import lint
from cfnlint.decode.cfn_yaml import loads

from workspace_memory.adapters import routed_cipher

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
EVENTS = ROOT / "events"

JWT, IAM, NONE = "jwt", "iam", "none"

EXPECTED_ROUTES: dict[str, str] = {
    # WorkspacesFunction
    "GET /v1/health": "WorkspacesFunction",
    "POST /v1/workspaces": "WorkspacesFunction",
    "GET /v1/workspaces": "WorkspacesFunction",
    "GET /v1/workspaces/{ws}": "WorkspacesFunction",
    "PUT /v1/workspaces/{ws}/members/{userId}": "WorkspacesFunction",
    "PUT /v1/workspaces/{ws}/ai": "WorkspacesFunction",
    "POST /v1/workspaces/{ws}/key-sessions": "WorkspacesFunction",
    "GET /v1/workspaces/{ws}/key-sessions": "WorkspacesFunction",
    "DELETE /v1/workspaces/{ws}/key-sessions/{keySessionId}": "WorkspacesFunction",
    "DELETE /v1/workspaces/{ws}": "WorkspacesFunction",
    "GET /v1/workspaces/{ws}/deletion": "WorkspacesFunction",
    "POST /v1/workspaces/{ws}/members/{userId}/erasure": "WorkspacesFunction",
    "GET /v1/workspaces/{ws}/erasures/{erasureId}": "WorkspacesFunction",
    "GET /v1/workspaces/{ws}/consolidation": "WorkspacesFunction",
    "PUT /v1/workspaces/{ws}/consolidation": "WorkspacesFunction",
    "POST /v1/workspaces/{ws}/consolidation/runs": "WorkspacesFunction",
    "GET /v1/workspaces/{ws}/audit": "WorkspacesFunction",
    # MemoryFunction
    "GET /v1/workspaces/{ws}/memory/policy": "MemoryFunction",
    "PUT /v1/workspaces/{ws}/memory/policy": "MemoryFunction",
    "GET /v1/workspaces/{ws}/memory": "MemoryFunction",
    "PUT /v1/workspaces/{ws}/memory": "MemoryFunction",
    "POST /v1/workspaces/{ws}/memory/clear": "MemoryFunction",
    "POST /v1/workspaces/{ws}/memory/undo": "MemoryFunction",
    "GET /v1/workspaces/{ws}/memory/versions": "MemoryFunction",
    "GET /v1/workspaces/{ws}/memory/versions/{version}": "MemoryFunction",
    "POST /v1/workspaces/{ws}/memory/proposals/apply": "MemoryFunction",
    "POST /v1/workspaces/{ws}/memory/purge": "MemoryFunction",
    "GET /v1/workspaces/{ws}/retention": "MemoryFunction",
    "PUT /v1/workspaces/{ws}/retention": "MemoryFunction",
    # EntriesFunction
    "POST /v1/workspaces/{ws}/entries": "EntriesFunction",
    "GET /v1/workspaces/{ws}/entries": "EntriesFunction",
    "GET /v1/workspaces/{ws}/entries/{entryId}": "EntriesFunction",
    "PUT /v1/workspaces/{ws}/entries/{entryId}": "EntriesFunction",
    "DELETE /v1/workspaces/{ws}/entries/{entryId}": "EntriesFunction",
    "GET /v1/workspaces/{ws}/entries/{entryId}/history": "EntriesFunction",
    "POST /v1/workspaces/{ws}/entries/{entryId}/revert": "EntriesFunction",
    "PUT /v1/workspaces/{ws}/entries/{entryId}/pin": "EntriesFunction",
    "DELETE /v1/workspaces/{ws}/entries/{entryId}/pin": "EntriesFunction",
    "POST /v1/workspaces/{ws}/entries/{entryId}/verify": "EntriesFunction",
    "DELETE /v1/workspaces/{ws}/members/{userId}/entries": "EntriesFunction",
    "POST /v1/workspaces/{ws}/search/reindex": "EntriesFunction",
    "POST /v1/workspaces/{ws}/mentions": "EntriesFunction",
    "GET /v1/workspaces/{ws}/consolidation/runs": "EntriesFunction",
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/pairs": "EntriesFunction",
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/proposals": "EntriesFunction",
    "POST /v1/automation/workspaces/{ws}/consolidation/runs/{runId}/finish": "EntriesFunction",
    "DELETE /v1/workspaces/{ws}/agent-memories": "EntriesFunction",
    "GET /v1/workspaces/{ws}/candidates": "EntriesFunction",
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/accept": "EntriesFunction",
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/reject": "EntriesFunction",
    "GET /v1/workspaces/{ws}/search": "EntriesFunction",
    "GET /v1/workspaces/{ws}/pages": "EntriesFunction",
    "POST /v1/workspaces/{ws}/pages": "EntriesFunction",
    "GET /v1/workspaces/{ws}/pages/{pageId}": "EntriesFunction",
    "PATCH /v1/workspaces/{ws}/pages/{pageId}": "EntriesFunction",
    "DELETE /v1/workspaces/{ws}/pages/{pageId}": "EntriesFunction",
    "PUT /v1/workspaces/{ws}/pages/{pageId}/entries/{entryId}": "EntriesFunction",
    "DELETE /v1/workspaces/{ws}/pages/{pageId}/entries/{entryId}": "EntriesFunction",
    "PUT /v1/workspaces/{ws}/page-categories": "EntriesFunction",
    # ConversationsFunction
    "POST /v1/conversations/{conv}/turns": "ConversationsFunction",
    "GET /v1/conversations/{conv}/turns/{turnId}": "ConversationsFunction",
    "GET /v1/conversations/{conv}/memory-receipts": "ConversationsFunction",
    # AutomationFunction
    "POST /v1/automation/conversations/{conv}/admissions": "AutomationFunction",
    "GET /v1/automation/workspaces/{ws}/memory": "AutomationFunction",
    "PUT /v1/automation/workspaces/{ws}/memory": "AutomationFunction",
    "PUT /v1/automation/workspaces/{ws}/entries": "AutomationFunction",
    "GET /v1/automation/workspaces/{ws}/entries": "AutomationFunction",
    "GET /v1/automation/workspaces/{ws}/entries/{entryId}": "AutomationFunction",
    "POST /v1/automation/workspaces/{ws}/entries/{entryId}/forget": "AutomationFunction",
    "POST /v1/automation/workspaces/{ws}/entries/{entryId}/verify": "AutomationFunction",
    "GET /v1/automation/workspaces/{ws}/search": "AutomationFunction",
    "GET /v1/automation/sessions/{sid}/notes": "AutomationFunction",
    "PUT /v1/automation/sessions/{sid}/notes": "AutomationFunction",
    "DELETE /v1/automation/sessions/{sid}/notes": "AutomationFunction",
    # DocsFunction
    "GET /v1/openapi.json": "DocsFunction",
    "GET /v1/docs": "DocsFunction",
    # FrameFunction
    "GET /app/": "FrameFunction",
    "GET /app/{file}": "FrameFunction",
    # DeletionFunction
    "POST /v1/automation/workspaces/{ws}/deletion/branch-key": "DeletionFunction",
    "POST /v1/automation/workspaces/{ws}/deletion/batches": "DeletionFunction",
    "POST /v1/automation/workspaces/{ws}/erasures/{erasureId}/steps": "DeletionFunction",
    # ExportsFunction
    "POST /v1/workspaces/{ws}/exports": "ExportsFunction",
    "GET /v1/workspaces/{ws}/exports/{exportId}": "ExportsFunction",
    "GET /v1/workspaces/{ws}/exports/{exportId}/archive": "ExportsFunction",
    "POST /v1/automation/workspaces/{ws}/exports/{exportId}/files": "ExportsFunction",
    "POST /v1/automation/workspaces/{ws}/exports/{exportId}/finish": "ExportsFunction",
    "POST /v1/workspaces/{ws}/imports": "ExportsFunction",
    "GET /v1/workspaces/{ws}/imports/{importId}": "ExportsFunction",
    "POST /v1/automation/workspaces/{ws}/imports/{importId}/files": "ExportsFunction",
    "POST /v1/automation/workspaces/{ws}/imports/{importId}/finish": "ExportsFunction",
}

API_FUNCTIONS = (
    "WorkspacesFunction",
    "MemoryFunction",
    "EntriesFunction",
    "ConversationsFunction",
    "AutomationFunction",
    "DocsFunction",
    "FrameFunction",
    "DeletionFunction",
    "ExportsFunction",
)
UNAUTHENTICATED_ROUTES = ("GET /v1/health", "GET /v1/openapi.json", "GET /v1/docs", "GET /app/", "GET /app/{file}")
"""Health, the API's own description and the memory frame's static files (no data)."""
STREAM_FUNCTIONS = ("ChangeFeedFunction",)
"""Functions fed by the table's stream, not by routes."""


# -- helpers (kept here on purpose: the runtime route reader lives elsewhere) -----------------------------


def _template_text() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    loaded: dict[str, Any] = loads(_template_text(), str(TEMPLATE))
    return loaded


def _resources(template: dict[str, Any], type_: str) -> dict[str, dict[str, Any]]:
    return {name: res for name, res in template["Resources"].items() if res.get("Type") == type_}


def _expected_auth(route_key: str) -> str:
    path = route_key.split(" ", 1)[1]
    if route_key in UNAUTHENTICATED_ROUTES:
        return NONE
    return IAM if path.startswith("/v1/automation/") else JWT


def _default_authorizer(template: dict[str, Any], api_ref: Any) -> str | None:
    assert isinstance(api_ref, dict), f"ApiId must be a Ref, got {api_ref!r}"
    assert set(api_ref) == {"Ref"}, f"ApiId must be a Ref, got {api_ref!r}"
    api = template["Resources"][api_ref["Ref"]]
    assert api["Type"] == "AWS::Serverless::HttpApi"
    default: str | None = api["Properties"].get("Auth", {}).get("DefaultAuthorizer")
    return default


def _auth_kind(template: dict[str, Any], props: dict[str, Any]) -> str:
    authorizer = props.get("Auth", {}).get("Authorizer")
    if authorizer is None:
        authorizer = _default_authorizer(template, props["ApiId"])
    if authorizer == "AWS_IAM":
        return IAM
    if authorizer in (None, "NONE"):
        return NONE
    api = template["Resources"][props["ApiId"]["Ref"]]
    config = api["Properties"]["Auth"]["Authorizers"][authorizer]
    assert "JwtConfiguration" in config, f"authorizer {authorizer} is not a JWT authorizer"
    return JWT


def _routes(template: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(route key, function logical id, auth kind) for every HttpApi event in the template."""
    routes = []
    for name, res in _resources(template, "AWS::Serverless::Function").items():
        for event in (res["Properties"].get("Events") or {}).values():
            if event["Type"] == "DynamoDB" and name in STREAM_FUNCTIONS:
                continue
            assert event["Type"] == "HttpApi", f"{name}: unexpected event type {event['Type']}"
            props = event["Properties"]
            route_key = f"{props['Method'].upper()} {props['Path']}"
            routes.append((route_key, name, _auth_kind(template, props)))
    return routes


def _all_event_files() -> list[Path]:
    return sorted(EVENTS.glob("*.json"))


def _is_stream_event(path: Path) -> bool:
    return "Records" in json.loads(path.read_text(encoding="utf-8"))


def _event_files() -> list[Path]:
    """The API Gateway events (one per route); the stream events are checked on their own."""
    return [p for p in _all_event_files() if not _is_stream_event(p)]


def _stream_event_files() -> list[Path]:
    return [p for p in _all_event_files() if _is_stream_event(p)]


def _event_auth(event: dict[str, Any]) -> str:
    authorizer = event["requestContext"].get("authorizer")
    if not authorizer:
        return NONE
    kinds: set[str] = set(authorizer) & {"jwt", "iam", "lambda"}
    assert len(kinds) == 1, f"ambiguous authorizer block {authorizer!r}"
    return kinds.pop()


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _statements(node: Any) -> Iterator[dict[str, Any]]:
    """Every IAM statement under `node`, including both branches of an Fn::If."""
    if isinstance(node, dict):
        if "Effect" in node and ("Action" in node or "NotAction" in node):
            yield node
        for value in node.values():
            yield from _statements(value)
    elif isinstance(node, list):
        for value in node:
            yield from _statements(value)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _role_of(template: dict[str, Any], function: str) -> dict[str, Any]:
    props = template["Resources"][function]["Properties"]
    role = props.get("Role")
    assert isinstance(role, dict), f"{function} must use an explicit role"
    assert "Fn::GetAtt" in role, f"{function} must use an explicit role"
    target = role["Fn::GetAtt"]
    logical = target[0] if isinstance(target, list) else target.split(".")[0]
    resource: dict[str, Any] = template["Resources"][logical]
    assert resource["Type"] == "AWS::IAM::Role"
    return resource


# -- lint ---------------------------------------------------------------------------------------------------


@pytest.mark.slow  # cfn-lint loads its whole spec (~15 s); `make test` and `make template-lint` run it
def test_cfn_lint_reports_nothing() -> None:
    matches = lint(_template_text())
    assert [f"{m.rule.id} {m.message} (line {m.linenumber})" for m in matches] == []


def test_template_is_a_sam_template(template: dict[str, Any]) -> None:
    assert template["Transform"] == "AWS::Serverless-2016-10-31"
    fn = template["Globals"]["Function"]
    assert fn["Runtime"] == "python3.13"
    assert fn["Architectures"] == ["x86_64"]
    assert fn["Layers"] == [{"Ref": "CoreLayer"}]
    env = fn["Environment"]["Variables"]
    assert env["TABLE_NAME"] == {"Ref": "MemoryTable"}
    assert env["KEY_STORE_TABLE_NAME"] == {"Ref": "BranchKeyTable"}
    assert env["KMS_KEY_ID"] == {"Fn::GetAtt": ["MemoryKey", "Arn"]}
    assert env["TEMPORAL_TASK_QUEUE"] == "workspace-memory-turns"
    assert set(template["Outputs"]) >= {"ApiUrl", "TableName", "KeyStoreTableName", "KmsKeyArn"}


# -- routes -------------------------------------------------------------------------------------------------


def test_every_route_exists_exactly_once(template: dict[str, Any]) -> None:
    counts = Counter(route_key for route_key, _, _ in _routes(template))
    assert {k: n for k, n in counts.items() if n != 1} == {}
    assert set(counts) == set(EXPECTED_ROUTES)


def test_routes_are_served_by_their_group_function(template: dict[str, Any]) -> None:
    served = {route_key: fn for route_key, fn, _ in _routes(template)}
    assert served == EXPECTED_ROUTES


def test_route_authorizers(template: dict[str, Any]) -> None:
    actual = {route_key: auth for route_key, _, auth in _routes(template)}
    expected = {route_key: _expected_auth(route_key) for route_key in EXPECTED_ROUTES}
    assert actual == expected


def test_http_api_auth(template: dict[str, Any]) -> None:
    (api,) = _resources(template, "AWS::Serverless::HttpApi").values()
    auth = api["Properties"]["Auth"]
    assert auth["DefaultAuthorizer"] == "JwtAuthorizer"
    assert auth["EnableIamAuthorizer"] is True
    jwt = auth["Authorizers"]["JwtAuthorizer"]
    assert jwt["IdentitySource"] == "$request.header.Authorization"
    assert jwt["JwtConfiguration"] == {"issuer": {"Ref": "JwtIssuer"}, "audience": {"Ref": "JwtAudience"}}


def test_paths_use_braces() -> None:
    for route_key in EXPECTED_ROUTES:
        assert "<" not in route_key
        # The frame's page is the one route with a trailing slash (`/app/`: its modules load relative to it).
        assert re.fullmatch(r"[A-Z]+ (/[a-zA-Z0-9.-]+|/\{[a-zA-Z]+\})+/?", route_key), route_key


def test_function_layout(template: dict[str, Any]) -> None:
    functions = _resources(template, "AWS::Serverless::Function")
    assert set(functions) == {*API_FUNCTIONS, *STREAM_FUNCTIONS, "TurnWorkerFunction"}
    for name in API_FUNCTIONS:
        props = functions[name]["Properties"]
        group = name.removesuffix("Function").lower()
        assert props["CodeUri"] == f"functions/{group}/"
        assert props["Handler"] == "app.handler"
        assert (ROOT / props["CodeUri"]).is_dir()
    worker = functions["TurnWorkerFunction"]
    props = worker["Properties"]
    assert props["CodeUri"] == "workflows/"
    assert props["Handler"] == "workflows.lambda_worker.handler"
    assert props["Timeout"] == 900
    assert props["AutoPublishAlias"] == "live"  # one immutable Lambda version per deploy, for Temporal to pin
    assert not props.get("Events"), "Temporal invokes the worker; it has no event source"
    assert worker["Metadata"] == {"BuildMethod": "makefile", "ContextPath": "scripts/sam"}


# -- the worker's package --------------------------------------------------------------------------------------


def _worker_build(template: dict[str, Any]) -> tuple[Path, str]:
    worker = template["Resources"]["TurnWorkerFunction"]
    return ROOT / worker["Metadata"]["ContextPath"] / "Makefile", worker["Properties"]["Handler"]


def test_worker_build_target_exists(template: dict[str, Any]) -> None:
    makefile, _ = _worker_build(template)
    assert re.search(r"^build-TurnWorkerFunction:", makefile.read_text(encoding="utf-8"), re.MULTILINE)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_worker_zip_holds_the_workflows_package(template: dict[str, Any], tmp_path: Path) -> None:
    """What `sam build` does for a makefile build: copy CodeUri to a scratch directory, run the target there
    with ARTIFACTS_DIR set. The artifact must hold `workflows/` as a package, so the handler's module path
    (`workflows.lambda_worker`) and its absolute `workflows.*` imports resolve from the zip root."""
    makefile, handler = _worker_build(template)
    code_uri = template["Resources"]["TurnWorkerFunction"]["Properties"]["CodeUri"]
    scratch, artifacts = tmp_path / "scratch", tmp_path / "artifacts"
    shutil.copytree(ROOT / code_uri, scratch)
    (scratch / "__pycache__").mkdir(exist_ok=True)
    (scratch / "__pycache__" / "stale.cpython-313.pyc").write_bytes(b"")
    subprocess.run(
        ["make", "--makefile", str(makefile), "build-TurnWorkerFunction"],
        cwd=scratch,
        env={**os.environ, "ARTIFACTS_DIR": str(artifacts)},
        check=True,
        capture_output=True,
    )
    module, _, attribute = handler.rpartition(".")
    assert attribute == "handler"
    assert (artifacts / (module.replace(".", "/") + ".py")).is_file()
    assert (artifacts / "workflows" / "__init__.py").is_file()
    assert (artifacts / "workflows" / "providers" / "__init__.py").is_file()
    assert sorted(p.name for p in artifacts.iterdir()) == ["workflows"], "only the package, at the zip root"
    assert not list(artifacts.rglob("__pycache__"))
    assert not list(artifacts.rglob("*.pyc"))
    source = sorted(p.relative_to(ROOT / code_uri) for p in (ROOT / code_uri).rglob("*.py"))
    assert sorted(p.relative_to(artifacts / "workflows") for p in artifacts.rglob("*.py")) == source


# -- events -------------------------------------------------------------------------------------------------


def test_events_exist() -> None:
    assert _event_files(), "events/*.json missing"


@pytest.mark.parametrize("path", _event_files(), ids=lambda p: p.name)
def test_event_matches_one_route(template: dict[str, Any], path: Path) -> None:
    event = json.loads(path.read_text(encoding="utf-8"))
    routes = _routes(template)
    matching = [(fn, auth) for route_key, fn, auth in routes if route_key == event["routeKey"]]
    assert len(matching) == 1, f"{path.name}: routeKey {event['routeKey']!r} matches {len(matching)} routes"
    _, auth = matching[0]
    assert _event_auth(event) == auth

    assert event["version"] == "2.0"
    assert event["isBase64Encoded"] is False
    ctx = event["requestContext"]
    assert ctx["routeKey"] == event["routeKey"]
    assert ctx["stage"] == "$default"
    assert isinstance(ctx["timeEpoch"], int)
    assert ctx["requestId"]
    method, route_path = event["routeKey"].split(" ", 1)
    assert ctx["http"]["method"] == method
    assert ctx["http"]["path"] == event["rawPath"]
    assert {"sourceIp", "protocol", "userAgent"} <= set(ctx["http"])

    params = event.get("pathParameters") or {}
    assert set(params) == set(re.findall(r"\{(\w+)\}", route_path))
    expected_path = re.sub(r"\{(\w+)\}", lambda m: params[m.group(1)], route_path)
    assert event["rawPath"] == expected_path

    query = event.get("queryStringParameters") or {}
    assert event["rawQueryString"] == "&".join(f"{k}={v}" for k, v in query.items())

    headers = event["headers"]
    assert all(name == name.lower() for name in headers)
    if "body" in event:
        assert headers["content-type"] == "application/json"
        assert isinstance(json.loads(event["body"]), dict)

    if auth == JWT:
        assert ctx["authorizer"]["jwt"]["claims"]["sub"] == "user-owner"
    elif auth == IAM:
        assert ctx["authorizer"]["iam"]["userArn"].startswith("arn:aws:iam::")


def test_every_route_has_an_event() -> None:
    covered = {json.loads(p.read_text(encoding="utf-8"))["routeKey"] for p in _event_files()}
    assert set(EXPECTED_ROUTES) - covered == set()


def test_events_readme_lists_every_file() -> None:
    readme = (EVENTS / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in _all_event_files() if f"`{p.name}`" not in readme] == []


def test_stream_events_have_the_shape_lambda_delivers() -> None:
    """`sam local generate-event dynamodb update`'s shape, with DynamoDB-JSON images of the table's keys."""
    files = _stream_event_files()
    assert [p.name for p in files] == ["change-feed-stream.json"]
    for path in files:
        records = json.loads(path.read_text(encoding="utf-8"))["Records"]
        assert records
        names = set()
        for record in records:
            assert set(record) >= {"eventID", "eventName", "eventVersion", "eventSource", "awsRegion", "dynamodb"}
            assert record["eventSource"] == "aws:dynamodb"
            assert record["eventSourceARN"].startswith("arn:aws:dynamodb:")
            stream = record["dynamodb"]
            assert set(stream["Keys"]) == {"pk", "sk"}
            assert stream["StreamViewType"] == "NEW_AND_OLD_IMAGES"
            assert {"SequenceNumber", "SizeBytes", "ApproximateCreationDateTime"} <= set(stream)
            image = "OldImage" if record["eventName"] == "REMOVE" else "NewImage"
            assert image in stream, f"{path.name}: {record['eventName']} without its {image}"
            names.add(record["eventName"])
        assert names == {"INSERT", "MODIFY", "REMOVE"}


# -- data and key -------------------------------------------------------------------------------------------


def _retained_table(
    template: dict[str, Any], name: str, hash_key: str, range_key: str, *indexed: str
) -> dict[str, Any]:
    """The properties of table `name`, after checking it is kept on delete and replace, billed per request, and
    keyed by two string attributes (plus the string attributes its indexes are keyed by)."""
    table = template["Resources"][name]
    assert table["Type"] == "AWS::DynamoDB::Table"
    assert table["DeletionPolicy"] == "Retain"
    assert table["UpdateReplacePolicy"] == "Retain"
    props: dict[str, Any] = table["Properties"]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert {(a["AttributeName"], a["AttributeType"]) for a in props["AttributeDefinitions"]} == {
        (hash_key, "S"),
        (range_key, "S"),
        *((attribute, "S") for attribute in indexed),
    }
    return props


def test_table(template: dict[str, Any]) -> None:
    props = _retained_table(template, "MemoryTable", "pk", "sk", "workspaceId", "userId")
    # The purge finds a workspace's items outside its partition by `workspaceId`; a person's workspaces are their
    # member items by `userId`: keys only, nothing else (the listing re-reads META and MEMBER consistently).
    assert props["GlobalSecondaryIndexes"] == [
        {
            "IndexName": "ByWorkspace",
            "KeySchema": [{"AttributeName": "workspaceId", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
        {
            "IndexName": "ByMember",
            "KeySchema": [
                {"AttributeName": "userId", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
    ]
    assert [(k["AttributeName"], k["KeyType"]) for k in props["KeySchema"]] == [("pk", "HASH"), ("sk", "RANGE")]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True


def test_key_store_table(template: dict[str, Any]) -> None:
    """The Material Providers Library's key-store schema; kept (losing it loses every workspace's data)."""
    props = _retained_table(template, "BranchKeyTable", "branch-key-id", "type")
    assert [(k["AttributeName"], k["KeyType"]) for k in props["KeySchema"]] == [
        ("branch-key-id", "HASH"),
        ("type", "RANGE"),
    ]
    assert "TimeToLiveSpecification" not in props, "a branch key never expires by itself"
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True


def test_key(template: dict[str, Any]) -> None:
    key = template["Resources"]["MemoryKey"]
    assert key["Type"] == "AWS::KMS::Key"
    assert key["DeletionPolicy"] == "Retain"
    assert key["Properties"]["EnableKeyRotation"] is True
    actions = [a for s in _statements(key["Properties"]["KeyPolicy"]) for a in _as_list(s["Action"])]
    assert "kms:*" not in actions
    assert _resources(template, "AWS::KMS::Alias")["MemoryKeyAlias"]["Properties"]["TargetKeyId"] == {
        "Ref": "MemoryKey"
    }


# -- roles --------------------------------------------------------------------------------------------------


def _policies(template: dict[str, Any], role_logical: str) -> list[tuple[str, dict[str, Any], str | None]]:
    """(name, document, CloudFormation condition) of every policy of a role: its inline `Policies` (an Fn::If
    branch carries that condition) and the AWS::IAM::RolePolicy resources attached to it."""
    found: list[tuple[str, dict[str, Any], str | None]] = []
    for entry in template["Resources"][role_logical]["Properties"].get("Policies", []):
        condition = None
        if "Fn::If" in entry:
            condition, entry, _ = entry["Fn::If"]
        found.append((entry["PolicyName"], entry["PolicyDocument"], condition))
    for resource in _resources(template, "AWS::IAM::RolePolicy").values():
        props = resource["Properties"]
        if props["RoleName"] == {"Ref": role_logical}:
            found.append((props["PolicyName"], props["PolicyDocument"], resource.get("Condition")))
    return found


def _role_logical(template: dict[str, Any], function: str) -> str:
    target = template["Resources"][function]["Properties"]["Role"]["Fn::GetAtt"]
    logical: str = target[0] if isinstance(target, list) else target.split(".")[0]
    _role_of(template, function)  # asserts it is an explicit AWS::IAM::Role
    return logical


def _role_statements(template: dict[str, Any], function: str) -> list[dict[str, Any]]:
    return [
        s for _, document, _ in _policies(template, _role_logical(template, function)) for s in _statements(document)
    ]


def _policy(template: dict[str, Any], function: str, name: str) -> tuple[dict[str, Any], str | None]:
    """The role's policy `name` (inline or a RolePolicy resource) and the condition it is under, if any."""
    for policy_name, document, condition in _policies(template, _role_logical(template, function)):
        if policy_name == name:
            return {"PolicyDocument": document}, condition
    raise AssertionError(f"no policy {name}")


def _allowed(policy: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (action, json.dumps(statement["Resource"], sort_keys=True))
        for statement in policy["PolicyDocument"]["Statement"]
        for action in _as_list(statement["Action"])
    }


def test_worker_role_has_no_dynamodb_access(template: dict[str, Any]) -> None:
    role = _role_of(template, "TurnWorkerFunction")
    actions = [a.lower() for s in _role_statements(template, "TurnWorkerFunction") for a in _as_list(s["Action"])]
    assert actions, "worker role has no statements at all"
    assert [a for a in actions if a.startswith("dynamodb:") or a == "*"] == []
    policies = _policies(template, _role_logical(template, "TurnWorkerFunction"))
    strings = list(_strings([document for _, document, _ in policies]))
    assert "MemoryTable" not in strings
    assert "BranchKeyTable" not in strings
    assert not role["Properties"].get("ManagedPolicyArns")


def test_worker_invokes_only_automation_routes(template: dict[str, Any]) -> None:
    statements = _role_statements(template, "TurnWorkerFunction")
    invoke = [s for s in statements if "execute-api:Invoke" in _as_list(s["Action"])]
    assert len(invoke) == 1
    (resource,) = _as_list(invoke[0]["Resource"])
    assert resource["Fn::Sub"].endswith(":${HttpApi}/*/*/v1/automation/*")


def test_worker_role_grants_the_codec_the_model_and_the_api_key(template: dict[str, Any]) -> None:
    key = json.dumps({"Fn::GetAtt": ["MemoryKey", "Arn"]})
    codec, condition = _policy(template, "TurnWorkerFunction", "payload-codec")
    assert condition is None
    assert _allowed(codec) == {("kms:GenerateDataKey", key), ("kms:Decrypt", key)}

    model, condition = _policy(template, "TurnWorkerFunction", "model")
    assert condition == "UseBedrock"
    ((action, resource),) = _allowed(model)
    assert action == "bedrock:InvokeModel"
    assert json.loads(resource)["Fn::Sub"].endswith(":foundation-model/${BedrockModelId}")

    api_key, condition = _policy(template, "TurnWorkerFunction", "temporal-api-key")
    assert condition == "HasTemporalApiKeySecret"
    assert _allowed(api_key) == {("secretsmanager:GetSecretValue", json.dumps({"Ref": "TemporalApiKeySecretArn"}))}


def test_worker_environment(template: dict[str, Any]) -> None:
    env = template["Resources"]["TurnWorkerFunction"]["Properties"]["Environment"]["Variables"]
    assert env["AUTOMATION_AUTH"] == "iam"
    assert env["AUTOMATION_BASE_URL"]["Fn::Sub"].startswith("https://${HttpApi}.execute-api.")
    assert env["MODEL_PROVIDER"] == {"Ref": "ModelProvider"}
    assert env["TEMPORAL_DEPLOYMENT_NAME"] == "workspace-memory"
    assert env["TEMPORAL_BUILD_ID"] == {"Ref": "WorkerBuildId"}
    assert env["TEMPORAL_API_KEY_SECRET_ARN"] == {
        "Fn::If": ["HasTemporalApiKeySecret", {"Ref": "TemporalApiKeySecretArn"}, {"Ref": "AWS::NoValue"}]
    }
    assert "TEMPORAL_API_KEY" not in env, "the API key is read from Secrets Manager, never configured in clear"


def test_temporal_invoke_role(template: dict[str, Any]) -> None:
    role = template["Resources"]["TemporalInvokeRole"]
    assert role["Type"] == "AWS::IAM::Role"
    assert role["Condition"] == "CreateTemporalInvoker"
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": {"Ref": "TemporalInvokerPrincipals"}}
    assert trust["Action"] == "sts:AssumeRole"
    assert trust["Condition"] == {"StringEquals": {"sts:ExternalId": {"Ref": "TemporalInvokerExternalId"}}}
    assert not role["Properties"].get("ManagedPolicyArns")
    ((_, document, _),) = _policies(template, "TemporalInvokeRole")
    versions = json.dumps({"Fn::Sub": "${TurnWorkerFunction.Arn}:*"})
    assert _allowed({"PolicyDocument": document}) == {
        ("lambda:InvokeFunction", versions),
        ("lambda:GetFunction", versions),
    }
    assert template["Outputs"]["TemporalInvokeRoleArn"]["Condition"] == "CreateTemporalInvoker"
    assert template["Outputs"]["TurnWorkerVersionArn"]["Value"] == {"Ref": "TurnWorkerFunction.Version"}


@pytest.mark.parametrize("function", [*API_FUNCTIONS, *STREAM_FUNCTIONS, "TurnWorkerFunction"])
def test_roles_are_least_privilege(template: dict[str, Any], function: str) -> None:
    role = _role_of(template, function)["Properties"]
    assert not role.get("ManagedPolicyArns"), "no managed (wildcard) policies"
    for statement in _role_statements(template, function):
        assert statement["Effect"] == "Allow"
        assert "NotAction" not in statement
        assert "NotResource" not in statement
        for action in _as_list(statement["Action"]):
            assert "*" not in action, f"{function}: wildcard action {action}"
        if set(_as_list(statement["Action"])) != TRACE_WRITES:  # X-Ray has no resource-level permissions
            assert "*" not in _as_list(statement["Resource"]), f"{function}: wildcard resource"
        if any(a.startswith("dynamodb:") for a in _as_list(statement["Action"])):
            assert statement["Resource"] in (
                MEMORY_TABLE,
                KEY_STORE_TABLE,
                MEMORY_STREAM,
                MEMORY_STREAMS,
                BY_WORKSPACE_INDEX,
                BY_MEMBER_INDEX,
            )
        if any(a.startswith("kms:") for a in _as_list(statement["Action"])):
            assert statement["Resource"] == MEMORY_KEY


def test_no_policy_outside_the_roles(template: dict[str, Any]) -> None:
    """Every grant is reviewable per role: inline policies, or RolePolicy resources on a function role."""
    assert _resources(template, "AWS::IAM::Policy") == {}
    assert _resources(template, "AWS::IAM::ManagedPolicy") == {}
    roles = {_role_logical(template, f) for f in ACCESS}
    for name, resource in _resources(template, "AWS::IAM::RolePolicy").items():
        assert resource["Properties"]["RoleName"] in [{"Ref": r} for r in roles], name


# -- least privilege: what each function's code does (docs/architecture.md#least-privilege) ----------------------
#
# Read off the code (layers/core/workspace_memory; adapters/dynamo.py maps the Table port to DynamoDB:
# get -> GetItem, get_many -> TransactGetItems (GetItem), query -> Query, put -> PutItem, transact ->
# TransactWriteItems, authorized per action: Put -> PutItem, Update -> UpdateItem, ConditionCheck ->
# ConditionCheckItem, Delete -> DeleteItem). Only the purge of a deleted workspace (DeletionFunction) and
# forgetting an entry (EntriesFunction) delete (otherwise TTL does); nothing scans.
#
# Keys (adapters/routed_cipher.py): workspace data goes through the hierarchical keyring
# (adapters/branch_keys.py): the key store is read with GetItem (GetActiveBranchKey, GetBranchKeyVersion)
# and each branch key is unwrapped with kms:Decrypt, to encrypt and to decrypt alike, under the MPL's own
# context whose `tablename` is the key store's logical name; CreateKey (with the workspace) calls
# kms:GenerateDataKeyWithoutPlaintext and kms:ReEncrypt, then one TransactWriteItems of conditional Puts.
# Temporal payloads go through KmsCipher: GenerateDataKey to encrypt, Decrypt to decrypt, under
# `kind=temporal-payload`. docs/data-model.md ("IAM") holds the same table.

GET, QUERY, PUT, UPDATE, CHECK, DELETE = (
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
)
LOGS = frozenset({"logs:CreateLogStream", "logs:PutLogEvents"})
TRACE_WRITES = frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"})
"""What `Tracing: Active` needs of every function role: X-Ray's two write actions, on "*" (no resource-level
permissions exist for them), and no other X-Ray action."""
STREAM_READ = frozenset({"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"})
ALL_KINDS = frozenset(
    {
        "credential",
        "document",
        "notes",
        "temporal-payload",
        "entry",
        "entry-key-secret",
        "entry-candidate",
        "search-snapshot",
        "turn-message",
        "export",
        "import",
        "archive-signature",
        "workspace-name",
        "key-session-binding",
    }
)
PAYLOAD_KIND = "temporal-payload"
SIGNATURE_KIND = "archive-signature"
NAME_KIND = "workspace-name"
BINDING_KIND = "key-session-binding"
SERVICE_KINDS = frozenset({PAYLOAD_KIND, SIGNATURE_KIND, NAME_KIND, BINDING_KIND})
NAMING_KINDS = frozenset({NAME_KIND, BINDING_KIND})
"""The service kinds whose context names the workspace (the function that opens them holds no branch key)."""
"""The kinds KMS sees: the payload codec's, an archive manifest's signature and a workspace's name. Every other
kind is workspace data under a branch key."""

BRANCH_KEY_USE = frozenset({"kms:Decrypt"})
BRANCH_KEY_CREATE = frozenset({"kms:GenerateDataKeyWithoutPlaintext", "kms:ReEncryptFrom", "kms:ReEncryptTo"})
PAYLOAD_USE = frozenset({"kms:GenerateDataKey", "kms:Decrypt"})

KIND = "kms:EncryptionContext:kind"
TABLENAME = "kms:EncryptionContext:tablename"
BRANCH_KEYS = "branch keys"
PAYLOADS = "payloads"
SIGNATURES = "archive signatures"
NAMES = "workspace names"
BINDINGS = "key session bindings"


@dataclass(frozen=True)
class Access:
    table: frozenset[str]
    """MemoryTable actions."""
    key_store: frozenset[str]
    """BranchKeyTable actions."""
    kms: dict[str, frozenset[str]]
    """KMS actions on MemoryKey per purpose: BRANCH_KEYS (context `tablename`), PAYLOADS, SIGNATURES and NAMES
    (`kind`)."""
    other: frozenset[str]
    stream: frozenset[str] = frozenset()
    """Actions on MemoryTable's stream (the event source mapping's reads)."""


NO_KMS: dict[str, frozenset[str]] = {}

ACCESS: dict[str, Access] = {
    # health (GetItem); membership snapshots (TransactGet); create workspace / member / key session (TWI Put
    # + ConditionCheck); workspace AI (TWI Update META + ConditionCheck); key-session revocation (TWI Put
    # + ConditionCheck).
    # Creating a workspace creates its branch key (CreateKey): it never unwraps one; its name is sealed (and
    # opened by the view and the listing) under the KMS key with `kind=workspace-name` (decision 0072). Deleting a
    # workspace: TWI Update META + Update DOC#HEAD + ConditionCheck; its branch key destroyed (key store Query +
    # DeleteItem); the deletion workflow started and its progress read (payload codec: start input and memo).
    # The caller's key sessions (Query KEYSESSION#) and workspaces (Query on the ByMember index: see
    # test_only_the_deletion_function_deletes_items).
    "WorkspacesFunction": Access(
        frozenset({GET, QUERY, PUT, UPDATE, CHECK}),
        frozenset({PUT, QUERY, DELETE}),
        {BRANCH_KEYS: BRANCH_KEY_CREATE, PAYLOADS: PAYLOAD_USE, NAMES: PAYLOAD_USE, BINDINGS: PAYLOAD_USE},
        LOGS,
    ),
    # snapshots; history (Query); save/clear/undo/apply (TWI Put version + Put head + ConditionCheck); policy
    # and the clear generation (TWI Update POLICY). Documents, under branch keys.
    "MemoryFunction": Access(
        frozenset({GET, QUERY, PUT, UPDATE, CHECK}), frozenset({GET}), {BRANCH_KEYS: BRANCH_KEY_USE}, LOGS
    ),
    # entries: snapshots; lists and chains (Query); create/supersede/decide (TWI Put head + Put revision + Update
    # counter/rate/predecessor + ConditionCheck right); forget (TWI Delete revisions and key slot, Put tombstone).
    # The only function that deletes items. Entries, the key-HMAC secret and candidates under branch keys.
    "EntriesFunction": Access(
        frozenset({GET, QUERY, PUT, UPDATE, CHECK, DELETE}), frozenset({GET}), {BRANCH_KEYS: BRANCH_KEY_USE}, LOGS
    ),
    # turn ingress = admission (GetItem replay, snapshot, TWI Put ADMKEY/ADMISSION/CREDENTIAL + ConditionCheck
    # META; credential encrypted under the branch key, decrypted on a resend) + workflow start (payload codec);
    # turn status (GetItem, payloads decoded); receipts (GetItem + Query). Never documents or notes.
    "ConversationsFunction": Access(
        frozenset({GET, QUERY, PUT, CHECK}),
        frozenset({GET}),
        {BRANCH_KEYS: BRANCH_KEY_USE, PAYLOADS: PAYLOAD_USE},
        LOGS,
    ),
    # admission (as above, credential); recall (snapshot, decrypt document, PutItem receipt; Query the entry
    # heads for rules and index, and the entry revisions' metadata when the search index is rebuilt for
    # selective recall); capture (snapshot, decrypt + encrypt document, TWI Put/Put + Update ADMISSION +
    # ConditionChecks); notes (GetItem, TWI Put); entry tools (save: TWI Put/Update + ConditionChecks; read:
    # GetItem; forget proposal: GetItem head, TWI Put candidate + Update rate + ConditionChecks - the forget
    # itself is a human's, in EntriesFunction); search_memory (snapshot, Query metadata). No Delete, never
    # Temporal payloads.
    # A key session's binding: its key prefixes opened, never sealed (decision 0077).
    "AutomationFunction": Access(
        frozenset({GET, QUERY, PUT, UPDATE, CHECK}),
        frozenset({GET}),
        {BRANCH_KEYS: BRANCH_KEY_USE, BINDINGS: frozenset({"kms:Decrypt"})},
        LOGS,
    ),
    # the table's stream (the event source mapping reads it as the function's role) and the feed's bus; no
    # table read, no key store, no key: it cannot decrypt the ciphertext the stream images carry. SendMessage
    # is the stream mapping's on-failure destination (a batch given up on is reported, not dropped).
    "ChangeFeedFunction": Access(
        frozenset(),
        frozenset(),
        NO_KMS,
        LOGS | {"events:PutEvents", "sqs:SendMessage"},
        STREAM_READ | {"dynamodb:ListStreams"},
    ),
    # serves a file it ships (the OpenAPI document) and Swagger UI: its own log group, nothing else.
    "DocsFunction": Access(frozenset(), frozenset(), NO_KMS, LOGS),
    # serves the memory frame's static files: its own log group, nothing else.
    "FrameFunction": Access(frozenset(), frozenset(), NO_KMS, LOGS),
    # the purge of a tombstoned workspace: GetItem META, Query its partition (and the ByWorkspace index: see
    # test_only_the_deletion_function_deletes_items), TWI of Deletes; the branch key destroyed (Query +
    # DeleteItem). A member's erasure: TWI of Deletes, Updates (pseudonym, counts) and Puts (receipt, audit
    # events, forget tombstones) + ConditionChecks (the owner, for the forget). No key use: it never encrypts
    # or decrypts.
    "DeletionFunction": Access(
        frozenset({GET, QUERY, PUT, UPDATE, CHECK, DELETE}), frozenset({QUERY, DELETE}), NO_KMS, LOGS
    ),
    # exports (decisions/0068): snapshots; the archive's contents read (Query the partition's kinds, and the
    # ByWorkspace index for the member's conversations: see test_only_the_deletion_and_entries_functions_...);
    # its sealed files written (TWI Put + ConditionCheck/Update EXPORT#) and deleted by the one download (TWI
    # Update + Deletes); branch keys to seal and open them; the export workflow started and its memo read.
    "ExportsFunction": Access(
        frozenset({GET, QUERY, PUT, UPDATE, CHECK, DELETE}),
        frozenset({GET}),
        {BRANCH_KEYS: BRANCH_KEY_USE, PAYLOADS: PAYLOAD_USE, SIGNATURES: PAYLOAD_USE},
        LOGS,
    ),
    # no table at all; the payload codec; the automation routes; the model; the Temporal API key secret.
    "TurnWorkerFunction": Access(
        frozenset(),
        frozenset(),
        {PAYLOADS: PAYLOAD_USE},
        LOGS | {"execute-api:Invoke", "bedrock:InvokeModel", "secretsmanager:GetSecretValue"},
    ),
}

# Everything that uses a KMS key's material, or hands use out (a grant): never for the account as a whole.
KMS_USE_ACTIONS = (
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:GenerateDataKeyPair",
    "kms:GenerateDataKeyPairWithoutPlaintext",
    "kms:GenerateMac",
    "kms:VerifyMac",
    "kms:Sign",
    "kms:Verify",
    "kms:DeriveSharedSecret",
    "kms:CreateGrant",
)
ACCOUNT_ROOT = {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}
PRINCIPAL_ARN = "aws:PrincipalArn"
MEMORY_TABLE = {"Fn::GetAtt": ["MemoryTable", "Arn"]}
KEY_STORE_TABLE = {"Fn::GetAtt": ["BranchKeyTable", "Arn"]}
MEMORY_KEY = {"Fn::GetAtt": ["MemoryKey", "Arn"]}
MEMORY_STREAM = {"Fn::GetAtt": ["MemoryTable", "StreamArn"]}
MEMORY_STREAMS = {
    "Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${MemoryTable}/stream/*"
}
FEED_BUS = {"Fn::GetAtt": ["ChangeFeedBus", "Arn"]}
BY_WORKSPACE_INDEX = {"Fn::Sub": "${MemoryTable.Arn}/index/ByWorkspace"}
BY_MEMBER_INDEX = {"Fn::Sub": "${MemoryTable.Arn}/index/ByMember"}


def _key_store_name() -> str:
    """The key store's logical name, as the code binds it into every branch key (read, not imported: the
    template test stays free of the Material Providers Library)."""
    source = (ROOT / "layers" / "core" / "workspace_memory" / "adapters" / "branch_keys.py").read_text("utf-8")
    names: list[str] = re.findall(r'^KEY_STORE_NAME = "([\w-]+)"$', source, re.MULTILINE)
    assert len(names) == 1
    return names[0]


def _key_statements(template: dict[str, Any]) -> list[tuple[dict[str, Any], str | None]]:
    """(statement, CloudFormation condition) of the key policy; an Fn::If entry yields its true branch."""
    out: list[tuple[dict[str, Any], str | None]] = []
    for entry in template["Resources"]["MemoryKey"]["Properties"]["KeyPolicy"]["Statement"]:
        if "Fn::If" in entry:
            condition, statement, otherwise = entry["Fn::If"]
            assert otherwise == {"Ref": "AWS::NoValue"}
            out.append((statement, condition))
        else:
            out.append((entry, None))
    return out


def _use_actions(statement: dict[str, Any]) -> set[str]:
    """The use actions a statement's Action patterns match (IAM actions are case-insensitive)."""
    patterns = [a.lower() for a in _as_list(statement.get("Action", []))]
    return {use for use in KMS_USE_ACTIONS for p in patterns if p == "*" or fnmatch.fnmatchcase(use.lower(), p)}


def _purpose(condition: dict[str, Any]) -> str:
    """What a key-use statement's context condition admits: branch keys of this key store, or payloads."""
    assert set(condition) >= {"StringEquals"}, f"no encryption-context condition in {condition}"
    equals = condition["StringEquals"]
    assert len(equals) == 1, f"exactly one context condition: {equals}"
    if TABLENAME in equals:
        assert _as_list(equals[TABLENAME]) == [_key_store_name()], equals
        return BRANCH_KEYS
    assert set(equals) == {KIND}, equals
    kinds = _as_list(equals[KIND])
    purposes = {PAYLOAD_KIND: PAYLOADS, SIGNATURE_KIND: SIGNATURES, NAME_KIND: NAMES, BINDING_KIND: BINDINGS}
    assert len(kinds) == 1, f"one kind per statement: {equals}"
    assert kinds[0] in purposes, f"KMS sees no kind but the service kinds: {equals}"
    return purposes[kinds[0]]


def _key_use(statements: list[dict[str, Any]]) -> dict[str, frozenset[str]]:
    """Purpose -> KMS actions of a role's or the key policy's statements (each purpose in one statement)."""
    grants: dict[str, frozenset[str]] = {}
    for statement in statements:
        purpose = _purpose(statement["Condition"])
        assert purpose not in grants, f"two statements for {purpose}"
        grants[purpose] = frozenset(_as_list(statement["Action"]))
    return grants


def test_context_kinds_are_the_codes() -> None:
    """The kinds the code builds are these; every context but the payload codec's names its workspace (so
    it is encrypted under that workspace's branch key, adapters/routed_cipher.py), and the payload kind is
    the routed cipher's only service kind."""
    core = ROOT / "layers" / "core" / "workspace_memory"
    literals = [
        (kind, literal)
        for path in core.rglob("*.py")
        for literal, kind in re.findall(
            r"""(\{[^{}]*["']kind["']\s*:\s*["']([\w-]+)["'][^{}]*\})""", path.read_text(encoding="utf-8")
        )
    ]
    assert {kind for kind, _ in literals} == set(ALL_KINDS)
    for kind, literal in literals:
        names_workspace = re.search(r"""["']workspace["']\s*:""", literal) is not None
        assert names_workspace == (kind not in SERVICE_KINDS or kind in NAMING_KINDS), f"{kind}: {literal}"
    assert routed_cipher.SERVICE_KINDS == SERVICE_KINDS
    assert NAMING_KINDS == routed_cipher.NAMING_SERVICE_KINDS


@pytest.mark.parametrize("function", list(ACCESS))
def test_role_actions_are_exactly_what_the_code_uses(template: dict[str, Any], function: str) -> None:
    access = ACCESS[function]
    statements = _role_statements(template, function)

    def actions(resource: dict[str, Any]) -> set[str]:
        return {a for s in statements if s["Resource"] == resource for a in _as_list(s["Action"])}

    assert {a for a in actions(MEMORY_TABLE) if a.startswith("dynamodb:")} == access.table
    assert {a for a in actions(KEY_STORE_TABLE) if a.startswith("dynamodb:")} == access.key_store
    stream = {a for a in actions(MEMORY_STREAM) | actions(MEMORY_STREAMS) if a.startswith("dynamodb:")}
    assert stream == access.stream
    dynamodb = {a for s in statements for a in _as_list(s["Action"]) if a.startswith("dynamodb:")}
    assert dynamodb == access.table | access.key_store | access.stream
    kms = {a for s in statements for a in _as_list(s["Action"]) if a.startswith("kms:")}
    assert kms == set().union(*access.kms.values())
    others = {a for s in statements for a in _as_list(s["Action"]) if not a.startswith(("dynamodb:", "kms:"))}
    assert others == access.other | TRACE_WRITES


@pytest.mark.parametrize("function", list(ACCESS))
def test_role_key_use_is_narrowed_to_its_purposes(template: dict[str, Any], function: str) -> None:
    access = ACCESS[function]
    key_statements = [
        s for s in _role_statements(template, function) if any(a.startswith("kms:") for a in _as_list(s["Action"]))
    ]
    for statement in key_statements:
        assert statement["Resource"] == MEMORY_KEY
        assert set(statement["Condition"]) == {"StringEquals"}
    assert _key_use(key_statements) == access.kms, f"{function} may use the key for exactly {access.kms}"
    if not key_statements:
        return
    # The grant lives in a separate RolePolicy (the key policy names the role): attach it before the code runs.
    role = _role_logical(template, function)
    (policy,) = (
        name
        for name, res in _resources(template, "AWS::IAM::RolePolicy").items()
        if res["Properties"]["RoleName"] == {"Ref": role}
        and any(a.startswith("kms:") for s in _statements(res["Properties"]) for a in _as_list(s["Action"]))
    )
    assert policy in _as_list(template["Resources"][function].get("DependsOn", []))


def test_branch_keys_are_created_by_one_function_that_cannot_unwrap_them(template: dict[str, Any]) -> None:
    """Creating a branch key (and writing the key store) is the workspaces function's alone, and it gets no
    kms:Decrypt: it can make a workspace's key but never use one. Every function that encrypts or decrypts
    workspace data reads the key store and unwraps branch keys with kms:Decrypt only. (Destroying a branch key -
    Query and DeleteItem on the key store - is not writing one: test_only_the_deletion_function_deletes_items.)"""
    creators = [f for f, a in ACCESS.items() if a.kms.get(BRANCH_KEYS, frozenset()) & BRANCH_KEY_CREATE]
    writers = [f for f, a in ACCESS.items() if a.key_store & {PUT, UPDATE}]
    assert creators == writers == ["WorkspacesFunction"]
    # Its one kms:Decrypt is the payload codec's (the deletion workflow's memo), under `kind=temporal-payload`,
    # a context no branch key is ever wrapped under.
    assert "kms:Decrypt" not in ACCESS["WorkspacesFunction"].kms[BRANCH_KEYS]
    for function, access in ACCESS.items():
        if access.kms.get(BRANCH_KEYS) == BRANCH_KEY_USE:
            assert access.key_store == {GET}, function


def test_only_the_deletion_and_entries_functions_delete_items(template: dict[str, Any]) -> None:
    """Table items are deleted by the purge of a deleted workspace, by forgetting an entry and by an export's one
    download (its own sealed files; TTL does the rest); only the purge and the exports (a member's conversations)
    may query the ByWorkspace index, and nothing else of it; key-store items by the purge and by the owner's
    DELETE (the branch key, at once)."""
    deleters = [f for f, a in ACCESS.items() if DELETE in a.table]
    assert deleters == ["EntriesFunction", "DeletionFunction", "ExportsFunction"]
    assert [f for f, a in ACCESS.items() if DELETE in a.key_store] == ["WorkspacesFunction", "DeletionFunction"]
    for function in ACCESS:
        on_index = {
            a
            for s in _role_statements(template, function)
            if s["Resource"] == BY_WORKSPACE_INDEX
            for a in _as_list(s["Action"])
        }
        readers = ("DeletionFunction", "ExportsFunction")
        assert on_index == ({QUERY} if function in readers else set()), function


def test_only_the_workspaces_function_queries_memberships(template: dict[str, Any]) -> None:
    """The ByMember index (a person's memberships) is queried by the workspace listing alone, and only queried."""
    for function in ACCESS:
        on_index = {
            a
            for s in _role_statements(template, function)
            if s["Resource"] == BY_MEMBER_INDEX
            for a in _as_list(s["Action"])
        }
        assert on_index == ({QUERY} if function == "WorkspacesFunction" else set()), function
    resources = [s["Resource"] for f in ACCESS for s in _role_statements(template, f)]
    assert not any("index/*" in json.dumps(r) for r in resources), "no grant on every index"
    assert "dynamodb:BatchWriteItem" not in json.dumps(template), "a purge batch is a TWI of Deletes, not puts"


def test_key_use_only_for_named_roles(template: dict[str, Any]) -> None:
    """Each use statement admits one function role (`aws:PrincipalArn`) for one purpose, and the key policy
    grants exactly what the roles' own policies grant."""
    by_role: dict[str, list[dict[str, Any]]] = {}
    for statement, condition in _key_statements(template):
        if not _use_actions(statement) or condition is not None:
            continue
        assert statement["Effect"] == "Allow"
        assert statement["Principal"] == {"AWS": ACCOUNT_ROOT}
        assert set(statement["Condition"]) == {"ArnEquals", "StringEquals"}, statement.get("Sid")
        principal = statement["Condition"]["ArnEquals"]
        assert set(principal) == {PRINCIPAL_ARN}
        role_ref = principal[PRINCIPAL_ARN]
        assert set(role_ref) == {"Fn::GetAtt"}, "one role per statement, by its ARN"
        role = role_ref["Fn::GetAtt"][0]
        assert role_ref["Fn::GetAtt"] == [role, "Arn"]
        by_role.setdefault(role, []).append(statement)
    granted = {role: _key_use(statements) for role, statements in by_role.items()}
    expected = {_role_logical(template, f): access.kms for f, access in ACCESS.items() if access.kms}
    assert granted == expected


def test_key_use_is_never_for_the_whole_account(template: dict[str, Any]) -> None:
    """Administration stays with the account (no use, no grants); no statement hands use to every principal
    of the account (no principal `*`, no `kms:CallerAccount`-only condition, no statement without
    `aws:PrincipalArn` and an encryption-context condition)."""
    statements = _key_statements(template)
    assert "kms:CallerAccount" not in json.dumps([s for s, _ in statements])
    admin = [s for s, _ in statements if s.get("Sid") == "KeyAdministrationByAccount"]
    assert len(admin) == 1
    assert admin[0]["Principal"] == {"AWS": ACCOUNT_ROOT}
    assert "Condition" not in admin[0]
    managed = [a for a in _as_list(admin[0]["Action"]) if fnmatch.fnmatchcase("kms:putkeypolicy", a.lower())]
    assert managed, "the account must keep kms:PutKeyPolicy, or the key could be orphaned"
    for statement, _ in statements:
        assert statement["Effect"] == "Allow"
        assert "NotAction" not in statement
        assert "NotPrincipal" not in statement
        assert statement["Principal"] not in ("*", {"AWS": "*"})
        uses = _use_actions(statement)
        if statement is admin[0]:
            assert uses == set(), f"key administration must not include use: {sorted(uses)}"
            continue
        assert uses, f"{statement.get('Sid')}: only the administration statement may grant non-use actions"
        assert "kms:CreateGrant" not in uses
        assert PRINCIPAL_ARN in statement.get("Condition", {}).get("ArnEquals", {}), statement.get("Sid")
        _purpose(statement["Condition"])


def test_payload_readers_are_optional_and_decrypt_payloads_only(template: dict[str, Any]) -> None:
    readers = [(s, c) for s, c in _key_statements(template) if c is not None]
    assert readers == [
        (
            {
                "Sid": "PayloadDecryptionByNamedOperators",
                "Effect": "Allow",
                "Principal": {"AWS": ACCOUNT_ROOT},
                "Action": "kms:Decrypt",
                "Resource": "*",
                "Condition": {
                    "ArnEquals": {PRINCIPAL_ARN: {"Ref": "PayloadReaderPrincipalArns"}},
                    "StringEquals": {KIND: "temporal-payload"},
                },
            },
            "HasPayloadReaders",
        )
    ]
    assert template["Parameters"]["PayloadReaderPrincipalArns"]["Default"] == ""
    assert template["Conditions"]["HasPayloadReaders"] == {
        "Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": "PayloadReaderPrincipalArns"}]}, ""]}]
    }


# -- the API's throttle ---------------------------------------------------------------------------------------


def test_http_api_is_throttled(template: dict[str, Any]) -> None:
    (api,) = _resources(template, "AWS::Serverless::HttpApi").values()
    settings = api["Properties"]["DefaultRouteSettings"]
    assert settings == {
        "ThrottlingRateLimit": {"Ref": "ApiThrottlingRateLimit"},
        "ThrottlingBurstLimit": {"Ref": "ApiThrottlingBurstLimit"},
    }
    assert "RouteSettings" not in api["Properties"], "no route may lift the default throttle"
    for name in ("ApiThrottlingRateLimit", "ApiThrottlingBurstLimit"):
        parameter = template["Parameters"][name]
        assert parameter["Type"] == "Number"
        assert int(parameter["MinValue"]) >= 1, f"{name}: 0 would shut the API, unset would lift the throttle"
        assert int(parameter["MinValue"]) <= int(parameter["Default"]) <= 1000


# -- observability (docs/operations.md) -------------------------------------------------------------------------


def test_every_function_is_traced_and_may_write_traces(template: dict[str, Any]) -> None:
    """Tracing: Active reaches every function (none turns it off), each role may write traces and nothing else
    of X-Ray, and the metrics' namespace and service name are set for every function."""
    globals_ = template["Globals"]["Function"]
    assert globals_["Tracing"] == "Active"
    variables = globals_["Environment"]["Variables"]
    assert variables["POWERTOOLS_SERVICE_NAME"] == "workspace-memory"
    assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "WorkspaceMemory"
    for function in (*API_FUNCTIONS, *STREAM_FUNCTIONS, "TurnWorkerFunction"):
        properties = template["Resources"][function]["Properties"]
        assert properties.get("Tracing", "Active") == "Active", function
        own = (properties.get("Environment") or {}).get("Variables") or {}
        assert not {name for name in own if name.startswith("POWERTOOLS_")}, f"{function}: overrides Globals"
        traces = [s for s in _role_statements(template, function) if "xray:PutTraceSegments" in _as_list(s["Action"])]
        assert [(frozenset(_as_list(s["Action"])), s["Resource"]) for s in traces] == [(TRACE_WRITES, "*")], function
        assert "Condition" not in traces[0]


ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "time": "$context.requestTimeEpoch",
    "route": "$context.routeKey",
    "status": "$context.status",
    "latencyMs": "$context.responseLatency",
    "integrationLatencyMs": "$context.integrationLatency",
    "responseLength": "$context.responseLength",
    "principal": "$context.authorizer.claims.sub",
    "iamPrincipal": "$context.identity.userArn",
    "error": "$context.error.responseType",
}
"""The access log's fields, as docs/operations.md documents them."""


def test_http_api_writes_access_logs_without_text(template: dict[str, Any]) -> None:
    """CKV_AWS_95: the stage logs every request, one JSON object each, to a log group with retention. The
    format names the route template, never the path (ids, entry keys) nor anything carrying the query string
    (`q` of /search is memory-derived text), a body, a header or the source IP."""
    (api,) = _resources(template, "AWS::Serverless::HttpApi").values()
    settings = api["Properties"]["AccessLogSettings"]
    assert settings["DestinationArn"] == {"Fn::GetAtt": ["ApiAccessLogGroup", "Arn"]}
    fmt = settings["Format"]
    assert json.loads(fmt) == ACCESS_LOG_FIELDS
    variables = set(re.findall(r"\$context\.[A-Za-z.]+", fmt))
    assert variables == set(ACCESS_LOG_FIELDS.values())
    for forbidden in ("path", "querystring", "body", "header", "sourceIp", "userAgent", "integrationErrorMessage"):
        assert forbidden.lower() not in fmt.lower(), forbidden
    group = template["Resources"]["ApiAccessLogGroup"]
    assert group["Type"] == "AWS::Logs::LogGroup"
    assert 1 <= group["Properties"]["RetentionInDays"] <= 90


# -- the change feed ------------------------------------------------------------------------------------------


def test_table_stream_carries_old_and_new_images(template: dict[str, Any]) -> None:
    """A REMOVE (TTL expiry) must still say what was removed: the old image names its workspace and ids."""
    props = template["Resources"]["MemoryTable"]["Properties"]
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}


def test_change_feed_function_reads_the_stream_with_bounded_retries(template: dict[str, Any]) -> None:
    props = template["Resources"]["ChangeFeedFunction"]["Properties"]
    assert props["CodeUri"] == "functions/changefeed/"
    assert props["Handler"] == "app.handler"
    assert (ROOT / props["CodeUri"] / "app.py").is_file()
    assert props["Environment"]["Variables"] == {"CHANGE_FEED_BUS_NAME": {"Ref": "ChangeFeedBus"}}
    assert props["LoggingConfig"] == {"LogGroup": {"Ref": "ChangeFeedLogGroup"}}
    ((name, event),) = props["Events"].items()
    assert event["Type"] == "DynamoDB", name
    source = event["Properties"]
    assert source["Stream"] == MEMORY_STREAM
    assert source["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert source["BisectBatchOnFunctionError"] is True
    assert 0 <= source["MaximumRetryAttempts"] <= 100, "retries must be bounded"
    assert 60 <= source["MaximumRecordAgeInSeconds"] <= 7 * 86400
    assert 1 <= source["BatchSize"] <= 1000
    assert source["StartingPosition"] == "TRIM_HORIZON", "a new deployment publishes the stream's whole window"
    failures = {"Fn::GetAtt": ["ChangeFeedFailures", "Arn"]}
    assert source["DestinationConfig"] == {"OnFailure": {"Type": "SQS", "Destination": failures}}, (
        "a batch given up on must be reported, not dropped"
    )


def test_change_feed_role_reads_one_stream_and_puts_on_one_bus(template: dict[str, Any]) -> None:
    """Exactly: the stream reads on this table's stream, PutEvents on the feed's own bus, SendMessage to its
    failure queue, its own log group.
    No table read, no key store, no KMS (the images it reads hold ciphertext it must never be able to open)."""
    statements = _role_statements(template, "ChangeFeedFunction")
    pairs = {(a, json.dumps(s["Resource"], sort_keys=True)) for s in statements for a in _as_list(s["Action"])}
    stream, streams, bus = (json.dumps(r, sort_keys=True) for r in (MEMORY_STREAM, MEMORY_STREAMS, FEED_BUS))
    logs = json.dumps({"Fn::GetAtt": ["ChangeFeedLogGroup", "Arn"]}, sort_keys=True)
    assert pairs == {
        ("dynamodb:DescribeStream", stream),
        ("dynamodb:GetRecords", stream),
        ("dynamodb:GetShardIterator", stream),
        ("dynamodb:ListStreams", streams),
        ("events:PutEvents", bus),
        ("sqs:SendMessage", json.dumps({"Fn::GetAtt": ["ChangeFeedFailures", "Arn"]}, sort_keys=True)),
        ("logs:CreateLogStream", logs),
        ("logs:PutLogEvents", logs),
        *((action, json.dumps("*")) for action in TRACE_WRITES),
    }
    assert all("Condition" not in s for s in statements)
    assert "DependsOn" not in template["Resources"]["ChangeFeedFunction"], "no key use to wait for"


def test_change_feed_bus_is_its_own_and_archived(template: dict[str, Any]) -> None:
    bus = template["Resources"]["ChangeFeedBus"]
    assert bus["Type"] == "AWS::Events::EventBus"
    assert bus["Properties"]["Name"] == {"Fn::Sub": "${AWS::StackName}-changes"}
    archives = _resources(template, "AWS::Events::Archive")
    assert [a["Properties"]["SourceArn"] for a in archives.values()] == [FEED_BUS]
    assert template["Outputs"]["ChangeFeedBusName"]["Value"] == {"Ref": "ChangeFeedBus"}
    # Nothing else may put events on the bus: no role but the feed's names it.
    for function in (*API_FUNCTIONS, "TurnWorkerFunction"):
        assert "ChangeFeedBus" not in list(_strings(_role_statements(template, function))), function
        assert not [a for s in _role_statements(template, function) for a in _as_list(s["Action"]) if "events:" in a]
