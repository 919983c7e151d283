"""The API's one OpenAPI 3.1 document, generated from the route groups' typed handlers.

Every HTTP function of template.yaml has its own powertools resolver. This loads each handler module (as the
local gateway does), takes the schema powertools generates from the handlers' request and response models,
and merges them into one document. It then adds what the handler signatures do not say:

- paths and path parameters as template.yaml spells them (the deployed API Gateway's routes);
- the success statuses the handler really answers (read from its `respond(...)` / `no_content()` calls);
- the security each route has in the template (JWT bearer, SigV4/IAM, none);
- the error envelope for each status the route can give, the statuses derived from the domain errors each
  route can raise (ROUTE_ERRORS) through the one mapping in `workspace_memory.api.errors`.

`python -m scripts.openapi` writes functions/docs/openapi.json, which the docs function serves;
`python -m scripts.openapi --check` fails when that file is stale (tests/unit/test_openapi.py does the same).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import json
import re
import sys
import textwrap
from collections.abc import Iterable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.api_gateway import Route as ResolverRoute
from pydantic.json_schema import models_json_schema

from scripts.localstack.template import ROOT, Route, load_template, routes
from workspace_memory import errors
from workspace_memory.admission import (
    ConversationBound,
    InvalidAdmission,
    KeySessionInvalid,
    KeySessionRequired,
)
from workspace_memory.api.errors import ANY_ROUTE, INTERNAL, STATUS_BY_ERROR
from workspace_memory.api.models.envelope import ErrorOut
from workspace_memory.capture import InvalidEdits, ProposalCleared
from workspace_memory.keysessions import KeySessionNotFound
from workspace_memory.notes import AdmissionRequired, AdmissionRetired, NotesConflict, NotesTooLarge, SessionNotFound
from workspace_memory.purge import LineInHead
from workspace_memory.turns import TurnNotFound

DOCUMENT = ROOT / "functions" / "docs" / "openapi.json"
TITLE = "workspace-memory"
VERSION = "1"
DESCRIPTION = (
    "A governed, encrypted memory service for AI agents. Human routes authenticate with the JWT authorizer; "
    "agent-runtime routes (`/v1/automation/*`) with IAM (SigV4). Every error is the envelope "
    '`{"error": {"code", "message"}}` with a stable code, and public details beside it where the error has them.'
)

Errors = tuple[type[errors.DomainError], ...]

# -- the errors each route can raise, beyond those every route can give (COMMON_ERRORS) -------------------
_MEMBER: Errors = (errors.WorkspaceNotFound, errors.Forbidden)
_BASE: Errors = (errors.StaleBaseVersion, errors.Conflict, errors.PreconditionRequired)
_ADMISSION: Errors = (InvalidAdmission, errors.ScopeNotGranted, errors.AiDisabled, errors.WorkspaceNotFound)
_NOTES: Errors = (AdmissionRequired, AdmissionRetired, InvalidAdmission, SessionNotFound)
_ADMIT: Errors = (
    errors.WorkspaceNotFound,
    errors.AiDisabled,
    KeySessionInvalid,
    KeySessionRequired,
    errors.IdempotencyKeyReused,
    ConversationBound,
)

_ENTRY: Errors = (errors.EntryNotFound, errors.EntryForgotten)
_ENTRY_TEXT: Errors = (errors.InvalidEntryKey, errors.PayloadTooLarge)
_ENTRY_MOVE: Errors = (errors.EntryCap, errors.StaleRevision, errors.Conflict)

ROUTE_ERRORS: dict[str, Errors] = {
    "GET /v1/health": (),
    "GET /v1/openapi.json": (),
    "GET /v1/docs": (),
    "GET /app/": (),
    "GET /app/{file}": (errors.AssetNotFound,),
    "POST /v1/workspaces": (),
    "GET /v1/workspaces": (),
    "GET /v1/workspaces/{ws}": (errors.WorkspaceNotFound,),
    "PUT /v1/workspaces/{ws}/members/{userId}": _MEMBER,
    "PUT /v1/workspaces/{ws}/ai": (*_MEMBER, errors.Conflict),
    "POST /v1/workspaces/{ws}/key-sessions": (*_MEMBER, errors.AiDisabled),
    "GET /v1/workspaces/{ws}/key-sessions": (errors.WorkspaceNotFound,),
    "DELETE /v1/workspaces/{ws}/key-sessions/{keySessionId}": (*_MEMBER, KeySessionNotFound),
    "GET /v1/workspaces/{ws}/memory/policy": _MEMBER,
    "PUT /v1/workspaces/{ws}/memory/policy": (*_MEMBER, errors.StalePolicyRevision),
    "GET /v1/workspaces/{ws}/memory": _MEMBER,
    "PUT /v1/workspaces/{ws}/memory": (*_MEMBER, *_BASE, errors.PayloadTooLarge),
    "POST /v1/workspaces/{ws}/memory/clear": (*_MEMBER, *_BASE),
    "POST /v1/workspaces/{ws}/memory/undo": (*_MEMBER, *_BASE, errors.VersionNotFound, errors.VersionPurged),
    "GET /v1/workspaces/{ws}/memory/versions": _MEMBER,
    "GET /v1/workspaces/{ws}/memory/versions/{version}": (*_MEMBER, errors.VersionNotFound, errors.VersionPurged),
    "POST /v1/workspaces/{ws}/memory/proposals/apply": (*_MEMBER, *_BASE, ProposalCleared, InvalidEdits),
    "POST /v1/workspaces/{ws}/memory/purge": (*_MEMBER, LineInHead),
    "GET /v1/workspaces/{ws}/retention": _MEMBER,
    "PUT /v1/workspaces/{ws}/retention": _MEMBER,
    "POST /v1/conversations/{conv}/turns": _ADMIT,
    "GET /v1/conversations/{conv}/turns/{turnId}": (errors.ConversationNotFound, TurnNotFound),
    "GET /v1/conversations/{conv}/memory-receipts": (errors.ConversationNotFound,),
    "POST /v1/automation/conversations/{conv}/admissions": _ADMIT,
    "GET /v1/automation/workspaces/{ws}/memory": _ADMISSION,
    "PUT /v1/automation/workspaces/{ws}/memory": (
        *_ADMISSION,
        InvalidEdits,
        errors.IdempotencyKeyReused,
        errors.RedactedToNothing,
    ),
    "PUT /v1/automation/workspaces/{ws}/entries": (
        *_ADMISSION,
        *_ENTRY_TEXT,
        errors.RedactedToNothing,
        errors.IdempotencyKeyReused,
        errors.QuoteRequired,
        errors.QuoteNotInMessage,
        errors.EntryCap,
        errors.StaleRevision,
    ),
    "GET /v1/automation/workspaces/{ws}/entries/{entryId}": (
        *_ADMISSION,
        *_ENTRY,
        AdmissionRetired,
        errors.MemoryOff,
    ),
    "POST /v1/automation/workspaces/{ws}/entries/{entryId}/forget": (
        *_ADMISSION,
        *_ENTRY,
        errors.IdempotencyKeyReused,
    ),
    "GET /v1/automation/workspaces/{ws}/search": (
        *_ADMISSION,
        AdmissionRetired,
        errors.MemoryOff,
        errors.UnknownParameter,
    ),
    "GET /v1/automation/sessions/{sid}/notes": _NOTES,
    "PUT /v1/automation/sessions/{sid}/notes": (*_NOTES, NotesConflict, NotesTooLarge, errors.RedactedToNothing),
    "DELETE /v1/automation/sessions/{sid}/notes": _NOTES,
    "DELETE /v1/workspaces/{ws}": (*_MEMBER, errors.ConfirmationRequired, errors.ConfirmationMismatch),
    "POST /v1/workspaces/{ws}/entries": (*_MEMBER, *_ENTRY_TEXT, errors.EntryCap, errors.StaleRevision),
    "GET /v1/workspaces/{ws}/entries": (*_MEMBER, errors.InvalidEntryKey),
    "GET /v1/workspaces/{ws}/entries/{entryId}": (*_MEMBER, *_ENTRY),
    "PUT /v1/workspaces/{ws}/entries/{entryId}": (
        *_MEMBER,
        *_ENTRY,
        *_ENTRY_TEXT,
        *_ENTRY_MOVE,
        errors.BaseRevisionRequired,
    ),
    "DELETE /v1/workspaces/{ws}/entries/{entryId}": (*_MEMBER, *_ENTRY),
    "GET /v1/workspaces/{ws}/entries/{entryId}/history": (*_MEMBER, *_ENTRY),
    "DELETE /v1/workspaces/{ws}/members/{userId}/entries": _MEMBER,
    "GET /v1/workspaces/{ws}/candidates": _MEMBER,
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/accept": (
        *_MEMBER,
        *_ENTRY,
        errors.CandidateNotFound,
        *_ENTRY_MOVE,
    ),
    "POST /v1/workspaces/{ws}/candidates/{candidateId}/reject": (*_MEMBER, errors.CandidateNotFound),
    "GET /v1/workspaces/{ws}/search": (errors.WorkspaceNotFound, errors.InvalidEntryKey, errors.UnknownParameter),
    "GET /v1/workspaces/{ws}/deletion": (errors.WorkspaceNotFound,),
    "POST /v1/automation/workspaces/{ws}/deletion/branch-key": (errors.WorkspaceNotDeleted,),
    "POST /v1/automation/workspaces/{ws}/deletion/batches": (errors.WorkspaceNotDeleted,),
}
"""Keyed by template route. The statuses come from `STATUS_BY_ERROR`; the codes listed are the classes'."""


def status_of(error: type[errors.DomainError]) -> int:
    """The status `workspace_memory.api.errors` answers for this class (the first base it lists)."""
    return next((status for cls, status in STATUS_BY_ERROR if issubclass(error, cls)), 500)


COMMON_ERRORS: tuple[tuple[int, str], ...] = ((500, INTERNAL), *((status_of(e), e.code) for e in ANY_ROUTE))
"""What any route can answer: a bug, the plumbing's own refusals, and the store being down."""

HEADER_DESCRIPTIONS = {
    "x-base-version": "The document version this write is based on (a non-negative integer). Absent: 428 "
    "BASE_VERSION_REQUIRED; not the current version: 409 STALE_BASE_VERSION with `currentVersion`.",
    "x-admission-id": "The admission this call is made under (from `POST …/admissions`).",
    "x-delivery-credential": "The admission's delivery credential (from `POST …/admissions`).",
    "idempotency-key": "Repeating a capture with the same key answers the stored receipt (`replayed: true`).",
    "x-expected-revision": "Compare-and-set: the notes revision this write replaces (409 when it is not current).",
    "x-confirm-workspace": "The workspace id again, to confirm a destructive call.",
}

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

_GATEWAY_MESSAGE = {
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
        elif parameter["in"] == "header" and parameter["name"] in HEADER_DESCRIPTIONS:
            parameter["description"] = HEADER_DESCRIPTIONS[parameter["name"]]
    operation["operationId"] = found.func.__name__
    operation["summary"] = route.route_key
    doc = inspect.getdoc(found.func)
    if doc:
        operation["description"] = doc
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
    for status, codes in sorted(error_statuses(route).items()):
        answers[str(status)] = _error_response(status, codes, route.auth)
    if route.auth != "none":
        answers["401"] = _error_response(401, ["UNAUTHENTICATED"], route.auth)
    answers["429"] = {
        "description": "Throttled by API Gateway (the stage's route throttling).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GatewayMessage"}}},
    }
    return {status: answers[status] for status in sorted(answers)}


def _success_description(status: int) -> str:
    return {200: "OK", 201: "Created", 202: "Accepted"}.get(status, "Success")


def error_statuses(route: Route) -> dict[int, list[str]]:
    """Status -> the error codes behind it, for this route: the common ones and its own (ROUTE_ERRORS)."""
    found: dict[int, list[str]] = {}
    for status, common in COMMON_ERRORS:
        found.setdefault(status, []).append(common)
    for error in ROUTE_ERRORS.get(route.route_key, ()):
        codes = found.setdefault(status_of(error), [])
        if error.code not in codes:
            codes.append(error.code)
    return found


def _error_response(status: int, codes: list[str], auth: str) -> dict[str, Any]:
    envelope: dict[str, Any] = {"$ref": "#/components/schemas/ErrorOut"}
    # API Gateway's authorizers refuse with their own body before the function runs.
    gateway = (status == 401 and auth != "none") or (status == 403 and auth == "iam")
    schema = {"anyOf": [envelope, {"$ref": "#/components/schemas/GatewayMessage"}]} if gateway else envelope
    return {"description": f"Error: {', '.join(codes)}", "content": {"application/json": {"schema": schema}}}


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


def _error_schemas() -> dict[str, Any]:
    _, top = models_json_schema(
        [(ErrorOut, "serialization")], by_alias=True, ref_template="#/components/schemas/{model}"
    )
    defs: dict[str, Any] = top["$defs"]
    return defs


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed document is stale")
    args = parser.parse_args(argv)
    text = render(build_document())
    if args.check:
        if not DOCUMENT.exists() or DOCUMENT.read_text(encoding="utf-8") != text:
            print(f"{DOCUMENT.relative_to(ROOT)} is stale: run `make openapi`", file=sys.stderr)
            return 1
        return 0
    DOCUMENT.write_text(text, encoding="utf-8")
    print(f"wrote {DOCUMENT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    from scripts.localstack.resources import isolate_environment

    isolate_environment()  # the handler modules are imported, never run: no AWS is reached either way
    raise SystemExit(main())
