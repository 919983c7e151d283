"""The OpenAPI document: valid OpenAPI 3.1, exactly the HTTP routes of template.yaml, each with its auth,
real success statuses and the error envelope for the statuses its domain errors map to; the committed copy
the docs function serves is the one the handlers generate today; the docs function serves it and an offline
Swagger UI."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

import pytest
from openapi_spec_validator import validate

from scripts.localstack.gateway import Gateway
from scripts.localstack.template import ROOT
from scripts.openapi import generate, route_errors
from workspace_memory.api.errors import ANY_ROUTE, error_of, registered_codes, status_for
from workspace_memory.kernel import errors

pytestmark = pytest.mark.unit

ENVELOPE = {"$ref": "#/components/schemas/ErrorOut"}
EDGE = {"$ref": "#/components/schemas/GatewayOrErrorOut"}
"""A status API Gateway answers too (its authorizers, its throttling): one schema both bodies fit."""


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return generate.build_document()


def _operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{m.upper()} {p}": op for p, item in document["paths"].items() for m, op in item.items()}


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert document["info"]["title"] == "workspace-memory"


def test_the_committed_document_is_current(document: dict[str, Any]) -> None:
    """A route, model or error mapping changed without `make openapi`: the served document would be stale."""
    assert generate.DOCUMENT.read_text(encoding="utf-8") == generate.render(document)


def test_every_template_route_is_documented_and_nothing_else(document: dict[str, Any]) -> None:
    assert set(_operations(document)) == {route.route_key for route in generate.http_routes()}


def test_every_route_has_decided_its_errors() -> None:
    """A new route needs its entry in ROUTE_ERRORS (even an empty one): which domain errors it can raise."""
    assert set(route_errors.ROUTE_ERRORS) == {route.route_key for route in generate.http_routes()}


@pytest.mark.parametrize("route", generate.http_routes(), ids=lambda r: r.route_key)
def test_each_route_documents_auth_statuses_and_envelope(document: dict[str, Any], route: Any) -> None:
    operation = _operations(document)[route.route_key]
    assert operation["security"] == {"jwt": [{"jwt": []}], "iam": [{"sigv4": []}], "none": []}[route.auth]
    responses = operation["responses"]
    errors_documented = {int(s): r for s, r in responses.items() if int(s) >= 400}
    own = set(route_errors.error_statuses(route))
    assert set(errors_documented) == own | {429} | ({401} if route.auth != "none" else set())
    assert {400, 413, 500, 503} <= own
    for status, response in errors_documented.items():
        schema = response["content"]["application/json"]["schema"]
        if status == 429 and status not in own:
            assert schema == {"$ref": "#/components/schemas/GatewayMessage"}  # only API Gateway throttles
            continue
        gateway = status in (401, 429) or (status == 403 and route.auth == "iam")
        assert schema == (EDGE if gateway else ENVELOPE), status
    assert "422" not in responses  # powertools' default validation answer: this API answers 400
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            assert f"{{{parameter['name']}}}" in route.path


def test_error_statuses_come_from_the_one_mapping() -> None:
    for classes in route_errors.ROUTE_ERRORS.values():
        for cls in classes:
            assert route_errors.status_of(cls) == status_for(cls.__new__(cls))  # an instance, whatever its details
    assert route_errors.status_of(errors.StaleBaseVersion) == 409
    assert route_errors.status_of(errors.VersionPurged) == 410


UNDECLARED = {
    errors.DomainError: "its code is INTERNAL, which every route documents as the plumbing's 500",
    errors.Unauthenticated: "documented as 401 on every authenticated route by the generator",
    errors.Gone: "a base class only: each route declares the Gone it raises (VERSION_PURGED, ENTRY_FORGOTTEN)",
}


def test_every_error_the_service_raises_is_declared_somewhere() -> None:
    """An error class the service's code names but no route declares is answered undocumented: RATE_LIMITED
    (agent writes), PERSONAL_DATA_IN_KEY (entry keys) and NOT_FOUND (a resend of an expired admission) were.
    Classes only the MCP server raises (mcp_server/, a client of the API) are no route's."""
    declared = {cls for classes in route_errors.ROUTE_ERRORS.values() for cls in classes} | set(ANY_ROUTE)
    every: list[type[errors.DomainError]] = []
    pending: list[type[errors.DomainError]] = [errors.DomainError]
    while pending:
        every.append(cls := pending.pop())
        pending.extend(cls.__subclasses__())
    sources = [*(ROOT / "layers").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    service = re.sub(r"^class \w+", "", "\n".join(path.read_text(encoding="utf-8") for path in sources), flags=re.M)
    named = {cls for cls in every if re.search(rf"\b{cls.__name__}\b", service)}
    assert {cls for cls in named if cls not in declared} == set(UNDECLARED)


def test_the_documented_errors_name_their_codes(document: dict[str, Any]) -> None:
    save = _operations(document)["PUT /v1/workspaces/{ws}/memory"]["responses"]
    assert "STALE_BASE_VERSION" in save["409"]["description"]
    assert save["409"]["x-error-codes"] == ["WORKSPACE_IMPORTING", "STALE_BASE_VERSION", "CONFLICT"]
    assert save["428"]["x-error-codes"] == ["BASE_VERSION_REQUIRED"]
    assert [p["name"] for p in _operations(document)["PUT /v1/workspaces/{ws}/memory"]["parameters"]] == [
        "ws",
        "x-base-version",
    ]


def test_a_rate_limited_answer_documents_retry_after(document: dict[str, Any]) -> None:
    ops = _operations(document)
    limited = ops["PUT /v1/automation/workspaces/{ws}/entries"]["responses"]["429"]
    assert limited["x-error-codes"] == ["RATE_LIMITED"]
    assert limited["headers"]["Retry-After"]["schema"] == {"type": "integer", "minimum": 1}
    assert "headers" not in ops["PUT /v1/workspaces/{ws}/memory"]["responses"]["429"]  # API Gateway's alone


def test_success_statuses_are_read_from_the_handlers(document: dict[str, Any]) -> None:
    ops = _operations(document)

    def successes(key: str) -> list[str]:
        return sorted(s for s in ops[key]["responses"] if s.startswith("2"))

    assert successes("POST /v1/automation/conversations/{conv}/admissions") == ["200", "201"]
    assert successes("POST /v1/workspaces") == ["201"]
    assert successes("POST /v1/conversations/{conv}/turns") == ["202"]
    assert successes("DELETE /v1/workspaces/{ws}/key-sessions/{keySessionId}") == ["204"]
    assert "content" not in ops["DELETE /v1/workspaces/{ws}/key-sessions/{keySessionId}"]["responses"]["204"]
    assert successes("GET /v1/workspaces/{ws}/memory") == ["200"]


def test_a_status_that_is_not_a_literal_cannot_be_documented() -> None:
    def handler(status: int) -> Any:
        return respond(status, None)  # type: ignore[name-defined]  # noqa: F821 - parsed, never run

    with pytest.raises(ValueError, match="literal status"):
        generate.success_statuses(handler)


def test_security_schemes_describe_jwt_and_sigv4(document: dict[str, Any]) -> None:
    """SigV4 the way API Gateway's own extension declares IAM authorization: an apiKey scheme on the
    `Authorization` header marked `awsSigv4`, which tools that know the extension sign for."""
    schemes = document["components"]["securitySchemes"]
    assert schemes["jwt"]["scheme"] == "bearer"
    sigv4 = schemes["sigv4"]
    assert (sigv4["type"], sigv4["in"], sigv4["name"]) == ("apiKey", "header", "Authorization")
    assert sigv4["x-amazon-apigateway-authtype"] == "awsSigv4"


@pytest.mark.parametrize("route", generate.http_routes(), ids=lambda r: r.route_key)
def test_each_operation_is_described_for_people(document: dict[str, Any], route: Any) -> None:
    """Issue 20: every summary repeated "METHOD path". Each route's decorator says what it does."""
    operation = _operations(document)[route.route_key]
    summary, description = operation["summary"], operation["description"]
    assert summary != route.route_key
    assert not re.match(r"(GET|PUT|POST|DELETE) /", summary)
    assert 10 <= len(summary) <= 70
    assert not summary.endswith(".")
    assert len(description) >= 60
    assert description.endswith((".", ")"))
    assert summary.lower() not in {
        other["summary"].lower() for key, other in _operations(document).items() if key != route.route_key
    }


def test_an_undescribed_route_cannot_be_documented() -> None:
    """A route whose decorator lacks summary= or description= fails the generator, not just this test."""
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    app = APIGatewayHttpResolver(enable_validation=True)

    @app.get("/v1/health", summary="Check that the service is up")
    def health() -> dict[str, str]:  # pragma: no cover - never called
        return {}

    (found,) = generate._resolver_routes(app)
    route = next(r for r in generate.http_routes() if r.route_key == "GET /v1/health")
    with pytest.raises(LookupError, match="description="):
        generate._operation(route, found, {"responses": {"200": {"description": "OK"}}})


def test_headers_the_service_refuses_without_are_required(document: dict[str, Any]) -> None:
    """Issue 20: they were documented optional `string|null`. The wire is unchanged (the handlers read them as
    optional, so an absent one answers its own code, never powertools' 422:
    tests/integration/api/test_openapi_client.py drives each absent)."""
    seen = set()
    for key, operation in _operations(document).items():
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "header" and parameter["name"] in generate.REQUIRED_HEADERS:
                seen.add(parameter["name"])
                assert parameter["required"] is True, key
                assert parameter["schema"]["type"] == "string", key
                assert "anyOf" not in parameter["schema"], key
    assert seen == generate.REQUIRED_HEADERS
    (base,) = [p for p in _operations(document)["PUT /v1/workspaces/{ws}/memory"]["parameters"] if p["in"] == "header"]
    assert base == {**base, "name": "x-base-version", "required": True, "schema": {"type": "string"}}


@pytest.mark.parametrize("route", generate.http_routes(), ids=lambda r: r.route_key)
def test_error_codes_are_enumerated_per_status(document: dict[str, Any], route: Any) -> None:
    """Each error status lists, machine-readably, the registered codes the route's errors answer with it."""
    responses = _operations(document)[route.route_key]["responses"]
    expected = route_errors.error_statuses(route)
    if route.auth != "none":
        expected.setdefault(401, []).append("UNAUTHENTICATED")
    listed = {int(s): r["x-error-codes"] for s, r in responses.items() if "x-error-codes" in r}
    assert listed == expected
    assert set().union(*listed.values()) <= registered_codes()
    for codes in listed.values():
        assert len(codes) == len(set(codes))


def test_one_schema_per_status(document: dict[str, Any]) -> None:
    """Issue 20: a union per status made generated clients return `ErrorOut | ErrorOut | GatewayMessage |
    GatewayMessage`. Every answer has one named schema."""
    for key, operation in _operations(document).items():
        for status, response in operation["responses"].items():
            for media in response.get("content", {}).values():
                assert not {"anyOf", "oneOf", "allOf"} & set(media["schema"]), (key, status)


def test_the_edge_schema_fits_both_the_envelope_and_the_gateways_body(document: dict[str, Any]) -> None:
    """Nothing required, the envelope's fields as they are and the gateway's `message`: both bodies fit."""
    components = document["components"]["schemas"]
    edge, envelope = components["GatewayOrErrorOut"], components["ErrorOut"]
    assert "required" not in edge
    assert edge["properties"] == {**envelope["properties"], "message": {"type": "string"}}
    assert set(error_of(errors.Forbidden("no write right")).wire()) <= set(edge["properties"])


@pytest.fixture(scope="module")
def gateway() -> Gateway:
    return Gateway()


def test_the_docs_function_serves_the_document(gateway: Gateway) -> None:
    served = gateway.invoke("GET", "/v1/openapi.json", {}, b"")
    assert served["statusCode"] == 200
    assert json.loads(served["body"]) == json.loads(generate.DOCUMENT.read_text(encoding="utf-8"))


def test_swagger_ui_loads_nothing_from_elsewhere(gateway: Gateway) -> None:
    page = gateway.invoke("GET", "/v1/docs", {}, b"")
    assert page["statusCode"] == 200
    assert page["headers"]["Content-Type"].startswith("text/html")
    body = page["body"]
    assert "SwaggerUIBundle(" in body
    assert re.findall(r"""<(?:script|link)[^>]+(?:src|href)=""", body) == []  # assets inlined, no CDN
    assert '"/v1/openapi.json"' in body  # its download link is the served document


def test_swagger_ui_carries_the_frames_security_headers(gateway: Gateway) -> None:
    """Issue 17, finding 12: /v1/docs sent no CSP, nosniff or frame-ancestors; any site could frame it."""
    page = gateway.invoke("GET", "/v1/docs", {}, b"")
    headers = {k.lower(): v for k, v in page["headers"].items()}
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    csp = dict(d.strip().split(" ", 1) for d in headers["content-security-policy"].split(";"))
    assert csp["default-src"] == "'none'"
    assert csp["frame-ancestors"] == "'none'"
    assert "unsafe" not in headers["content-security-policy"]
    inline = re.findall(r"<script(?:\s[^>]*)?>(.*?)</script>", page["body"], flags=re.DOTALL)
    assert inline
    for block in inline:  # every inline script the page has is allowed by its hash, and nothing else is
        digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp["script-src"].split()
    assert len(csp["script-src"].split()) == len(set(inline))
