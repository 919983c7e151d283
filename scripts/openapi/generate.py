"""The merged document: each HTTP function's powertools schema with the template's paths and parameter
names, the statuses its handler really answers, its security and the error envelope of each error status
(`scripts.openapi.route_errors`).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import re
import textwrap
from collections.abc import Iterable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.api_gateway import Route as ResolverRoute
from pydantic.json_schema import models_json_schema

from scripts.localstack.template import ROOT, Route, load_template, routes
from scripts.openapi.route_errors import error_statuses
from workspace_memory.api.models.envelope import ErrorOut
from workspace_memory.kernel.errors import RateLimited

DOCUMENT = ROOT / "functions" / "docs" / "openapi.json"
TITLE = "workspace-memory"
VERSION = "1"
DESCRIPTION = (
    "A governed, encrypted memory service for AI agents. Human routes authenticate with the JWT authorizer; "
    "agent-runtime routes (`/v1/automation/*`) with IAM (SigV4). Every error is the envelope "
    '`{"error": {"code", "message"}}` with a stable code, and public details beside it where the error has them.'
)

HEADER_DESCRIPTIONS = {
    "x-base-version": "The document version this write is based on (a non-negative integer; 0 creates the "
    "first version). Absent: 428 BASE_VERSION_REQUIRED; not the current version: 409 STALE_BASE_VERSION with "
    "`currentVersion`.",
    "x-base-revision": "The entry revision this edit is based on (a positive integer). Absent: 428 "
    "BASE_REVISION_REQUIRED; not the current revision: 409 STALE_REVISION.",
    "x-admission-id": "The admission this call is made under (from `POST …/admissions`).",
    "x-delivery-credential": "The admission's delivery credential (from `POST …/admissions`).",
    "idempotency-key": "The write's identity: repeating it with the same key answers the stored result "
    "instead of writing twice. A capture's key is `memory:<admissionId>`; absent: 400 INVALID_REQUEST.",
    "x-expected-revision": "Compare-and-set: the notes revision this write replaces (409 when it is not current).",
    "x-confirm-workspace": "The workspace id again, to confirm a destructive call.",
    "x-confirm-member": "The member's user id again, to confirm their erasure.",
}

REQUIRED_HEADERS = frozenset(
    {
        "x-base-version",
        "x-base-revision",
        "idempotency-key",
        "x-admission-id",
        "x-delivery-credential",
        "x-confirm-workspace",
        "x-confirm-member",
    }
)
"""Headers the service refuses a request without (428 or 400 with its stable code). The handlers read them
as optional, so the refusal is the service's own code rather than powertools' 422: the document says
required, the wire is unchanged (tests/integration/api/test_openapi_client.py drives each one absent)."""


def _require(parameter: dict[str, Any]) -> None:
    """A header documented required: its non-null branch (powertools spells `str | None` as a union)."""
    schema = parameter["schema"]
    branches = [branch for branch in schema.pop("anyOf", [schema]) if branch.get("type") != "null"]
    parameter["schema"] = {**branches[0], **{k: v for k, v in schema.items() if k != "title"}}
    parameter["required"] = True


SECURITY_SCHEMES: dict[str, dict[str, Any]] = {
    "jwt": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "Human routes: API Gateway's JWT authorizer (issuer and audience are stack parameters); the "
        "token's `sub` is the user. The local stack accepts `Bearer dev:<userId>` instead (loopback only).",
    },
    "sigv4": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "Agent-runtime routes: a request signed with AWS Signature Version 4 (service "
        "`execute-api`) by an IAM principal allowed to invoke the route. The local stack accepts "
        "`Bearer automation:<name>` instead (loopback only).",
        "x-amazon-apigateway-authtype": "awsSigv4",
    },
}
_SECURITY: dict[str, list[dict[str, list[str]]]] = {"jwt": [{"jwt": []}], "iam": [{"sigv4": []}], "none": []}

_GATEWAY_MESSAGE: dict[str, Any] = {
    "type": "object",
    "title": "GatewayMessage",
    "description": "API Gateway's own refusal (authorizer, throttling): not the service's envelope.",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}
_POWERTOOLS_ONLY = ("HTTPValidationError", "ValidationError", "ResponseValidationError")
"""Powertools' default 422/500 shapes: this API answers both with the envelope instead."""


def http_routes() -> list[Route]:
    return routes(load_template())


def build_document(template_routes: Iterable[Route] | None = None) -> dict[str, Any]:
    """The merged, post-processed document for the template's HTTP routes."""
    by_key = {route.route_key: route for route in (template_routes or http_routes())}
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {}
    for function in sorted({route.function for route in by_key.values()}):
        mine = [route for route in by_key.values() if route.function == function]
        app: APIGatewayHttpResolver = _load_module(function, mine[0]).app
        schema = app.get_openapi_schema(title=TITLE, version=VERSION).model_dump(
            by_alias=True, exclude_none=True, mode="json"
        )
        schemas.update(schema.get("components", {}).get("schemas", {}))
        resolver_routes = {(r.method, r.openapi_path): r for r in _resolver_routes(app)}
        for route in mine:
            found = _matching(route, resolver_routes)
            if found is None:
                raise LookupError(f"{route.route_key} ({function}) has no route in its handler's resolver")
            operation = schema["paths"][found.openapi_path][found.method.lower()]
            paths.setdefault(str(route.path), {})[str(route.method).lower()] = _operation(route, found, operation)
    for name in _POWERTOOLS_ONLY:
        schemas.pop(name, None)
    schemas.update(_error_schemas())
    schemas["GatewayMessage"] = _GATEWAY_MESSAGE
    schemas["GatewayOrErrorOut"] = _gateway_or_error(schemas["ErrorOut"])
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": VERSION, "description": DESCRIPTION},
        "servers": [{"url": "/", "description": "This API (the local gateway: http://127.0.0.1:3000)"}],
        "paths": {path: paths[path] for path in sorted(paths)},
        "components": {
            "schemas": {name: schemas[name] for name in sorted(schemas)},
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


def _load_module(function: str, route: Route) -> Any:
    module_name, _, _ = route.handler.rpartition(".")
    path = route.code_dir / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(f"openapi_{function}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _resolver_routes(app: APIGatewayHttpResolver) -> list[ResolverRoute]:
    # Powertools keeps its routes here (no public accessor); the schema alone does not name the handler.
    return [*app._static_routes, *app._dynamic_routes]


def _shape(path: str) -> str:
    """A path with its parameter names blanked: `{userId}` (template) and `{user_id}` (handler) are one route."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def _matching(route: Route, resolver_routes: dict[tuple[str, str], ResolverRoute]) -> ResolverRoute | None:
    for (method, path), found in resolver_routes.items():
        if method == route.method and _shape(path) == _shape(route.path):
            return found
    return None


def _operation(route: Route, found: ResolverRoute, operation: dict[str, Any]) -> dict[str, Any]:
    """Powertools' operation, with the template's parameter names, the real statuses, security and errors."""
    renames = dict(zip(re.findall(r"\{(\w+)\}", found.openapi_path), re.findall(r"\{(\w+)\}", route.path), strict=True))
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            parameter["name"] = renames[parameter["name"]]
            parameter["schema"].pop("title", None)
        elif parameter["in"] == "header":
            parameter["description"] = HEADER_DESCRIPTIONS.get(parameter["name"], parameter.get("description"))
            if parameter["name"] in REQUIRED_HEADERS:
                _require(parameter)
    if not found.summary or not found.description:
        raise LookupError(f"{route.route_key}: its route decorator needs a summary= and a description=")
    operation["operationId"] = found.func.__name__
    operation["tags"] = [route.function.removesuffix("Function").lower()]
    operation["security"] = _SECURITY[route.auth]
    operation["responses"] = _responses(route, found, operation["responses"])
    return operation


def _responses(route: Route, found: ResolverRoute, documented: dict[str, Any]) -> dict[str, Any]:
    success = documented["200"]
    statuses = success_statuses(found.func) or [200]
    answers: dict[str, Any] = {}
    for status in statuses:
        if status == 204:
            answers["204"] = {"description": "No content"}
        else:
            answers[str(status)] = {**success, "description": _success_description(status)}
    codes_by_status = error_statuses(route)
    if route.auth != "none" and "UNAUTHENTICATED" not in codes_by_status.setdefault(401, []):
        codes_by_status[401].append("UNAUTHENTICATED")
    for status, codes in sorted(codes_by_status.items()):
        answers[str(status)] = _error_response(codes, _gateway_answers(status, route.auth))
    if "429" not in answers:
        answers["429"] = {"description": _THROTTLED, "content": _json("GatewayMessage")}
    return {status: answers[status] for status in sorted(answers)}


_THROTTLED = 'Throttled by API Gateway (the stage\'s route throttling): its own `{"message"}` body.'


def _gateway_answers(status: int, auth: str) -> bool:
    """Whether API Gateway itself may answer this status, before the function runs: its authorizers (401; 403
    on IAM routes) and its throttling (429), each with its own `{"message"}` body."""
    return (status == 401 and auth != "none") or (status == 403 and auth == "iam") or status == 429


def _success_description(status: int) -> str:
    return {200: "OK", 201: "Created", 202: "Accepted"}.get(status, "Success")


def _json(schema: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}}


def _error_response(codes: list[str], gateway: bool) -> dict[str, Any]:
    """One schema per status: the envelope, or where API Gateway may answer too, the one shape both bodies
    fit (GatewayOrErrorOut). The codes are listed in `x-error-codes`, machine-readable, and in the text."""
    listed = ", ".join(f"`{code}`" for code in codes)
    answer: dict[str, Any] = {"description": f"{listed}.", "content": _json("ErrorOut"), "x-error-codes": codes}
    if gateway:
        answer["description"] = f"{listed}; or API Gateway's own refusal before the function runs (`message`)."
        answer["content"] = _json("GatewayOrErrorOut")
    if RateLimited.code in codes:  # the one error with `retryAfter`, also sent as a header (api/http.py `refusal`)
        answer["headers"] = {"Retry-After": {"description": "Seconds until a retry can succeed.", "schema": _SECONDS}}
    return answer


_SECONDS = {"type": "integer", "minimum": 1}


def success_statuses(func: Any) -> list[int]:
    """The statuses a handler answers, read from its `respond(<status>, …)` and `no_content()` calls."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    statuses: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        if node.func.id == "no_content":
            statuses.add(204)
        elif node.func.id == "respond" and node.args:
            first = node.args[0]
            for part in (first.body, first.orelse) if isinstance(first, ast.IfExp) else (first,):
                if not isinstance(part, ast.Constant) or not isinstance(part.value, int):
                    raise ValueError(f"{func.__name__}: respond() needs a literal status to be documented")
                statuses.add(part.value)
    return sorted(statuses)


def _gateway_or_error(envelope: dict[str, Any]) -> dict[str, Any]:
    """The one shape of a status both the service and API Gateway answer: the envelope's fields and the
    gateway's `message`, none required (a union of the two would repeat each in generated clients' types)."""
    properties = {**envelope["properties"], "message": _GATEWAY_MESSAGE["properties"]["message"]}
    return {
        "type": "object",
        "title": "GatewayOrErrorOut",
        "description": "The service's envelope (`error` with its stable code) or, when API Gateway refused "
        "before the function ran, its `message`.",
        "properties": properties,
    }


def _error_schemas() -> dict[str, Any]:
    _, top = models_json_schema(
        [(ErrorOut, "serialization")], by_alias=True, ref_template="#/components/schemas/{model}"
    )
    defs: dict[str, Any] = top["$defs"]
    return defs


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
