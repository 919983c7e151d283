"""API Gateway's part of a request (HTTP API, payload v2.0): the route from template.yaml, the dev
authorizers, the event, and the answer when the function gives none.

Dev auth stands in for the authorizers, on loopback only: `Authorization: Bearer dev:<userId>` for JWT routes
(the claim `sub`), `Bearer automation:<name>` for IAM routes. When the function fails to answer, the caller
gets an error envelope as API Gateway gives a status: 502 when the function failed (an unhandled error, its
process crashed or answered out of protocol, or it did not start), 504 when it ran past its timeout (its
process is killed), 503 when every environment of the function stayed busy
(docs/decisions/0043-one-process-per-execution-environment.md).
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from scripts.localstack.environments import Invocation
from scripts.localstack.pool import NoEnvironment
from scripts.localstack.template import Route
from workspace_memory.api.errors import error_envelope

Invoke = Callable[[str, dict[str, Any], str], Invocation]
"""(function logical id, event, request id) -> what the invocation came to."""

FAILURES: dict[str, tuple[int, str, str]] = {
    "error": (502, "FUNCTION_ERROR", "the function failed with an unhandled error"),
    "crash": (502, "FUNCTION_CRASHED", "the function's execution environment exited without an answer"),
    "init_error": (502, "FUNCTION_INIT_FAILED", "the function's execution environment did not start"),
    "timeout": (504, "FUNCTION_TIMEOUT", "the function ran past its timeout"),
}


def error_response(status: int, code: str, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json"},
        "body": json.dumps(error_envelope(code, message).wire()),
    }


def authorizer(kind: str, authorization: str | None) -> dict[str, Any] | None:
    """Returns the requestContext.authorizer block, or None when the caller is not authorized."""
    if kind == "none":
        return {}
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    prefix, _, name = token.partition(":")
    if kind == "jwt" and prefix == "dev" and name:
        return {"jwt": {"claims": {"sub": name}, "scopes": None}}
    if kind == "iam" and prefix == "automation" and name:
        return {
            "iam": {
                "accessKey": "AKIALOCAL",
                "accountId": "000000000000",
                "callerId": f"AIDA{name}",
                "principalOrgId": None,
                "userArn": f"arn:aws:iam::000000000000:user/{name}",
                "userId": f"AIDA{name}",
            }
        }
    return None


def build_event(
    route: Route,
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
    params: dict[str, str],
    auth: dict[str, Any],
    source_ip: str,
) -> dict[str, Any]:
    """The API Gateway v2.0 event of a request (headers lower-cased, repeated query keys comma-joined, a body
    that is not UTF-8 base64-encoded)."""
    now = time.time()
    qs: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        qs[key] = f"{qs[key]},{value}" if key in qs else value
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode("ascii"), True
    context: dict[str, Any] = {
        "accountId": "000000000000",
        "apiId": "local",
        "domainName": headers.get("host", "127.0.0.1"),
        "domainPrefix": "local",
        "http": {
            "method": method,
            "path": path,
            "protocol": "HTTP/1.1",
            "sourceIp": source_ip,
            "userAgent": headers.get("user-agent", ""),
        },
        "requestId": str(uuid.uuid4()),
        "routeKey": route.route_key,
        "stage": "$default",
        "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
        "timeEpoch": int(now * 1000),
    }
    if auth:
        context["authorizer"] = auth
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route.route_key,
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": context,
        "isBase64Encoded": encoded,
    }
    if qs:
        event["queryStringParameters"] = qs
    if params:
        event["pathParameters"] = params
    if body:
        event["body"] = text
    return event


def http_response(invocation: Invocation) -> dict[str, Any]:
    """The function's answer as API Gateway reads a v2.0 response; an envelope when there is none."""
    if invocation.kind != "result":
        status, code, message = FAILURES[invocation.kind]
        detail = f" ({invocation.error_type})" if invocation.error_type else ""
        return error_response(status, code, message + detail)
    payload = invocation.payload
    if isinstance(payload, dict) and "statusCode" in payload:
        return payload
    # v2.0: any other valid JSON is the body of a 200.
    return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(payload)}


class Router:
    """Matches a request to the template's routes and hands its event to the route's function."""

    def __init__(self, routes: list[Route], invoke: Invoke) -> None:
        self.routes = routes
        self._invoke = invoke

    def handle(
        self, method: str, raw_url: str, headers: dict[str, str], body: bytes, source_ip: str = "127.0.0.1"
    ) -> dict[str, Any]:
        url = urlsplit(raw_url)
        for route in self.routes:
            params = route.match(method, url.path)
            if params is None:
                continue
            lower = {k.lower(): v for k, v in headers.items()}
            auth = authorizer(route.auth, lower.get("authorization"))
            if auth is None:
                return error_response(401, "UNAUTHENTICATED", "missing or invalid dev credentials for this route")
            event = build_event(route, method, url.path, url.query, lower, body, params, auth, source_ip)
            try:
                invocation = self._invoke(route.function, event, event["requestContext"]["requestId"])
            except NoEnvironment:
                return error_response(503, "FUNCTION_BUSY", "every execution environment of the function is busy")
            return http_response(invocation)
        return error_response(404, "ROUTE_NOT_FOUND", "no such route")
