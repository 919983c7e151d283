"""A local stand-in for API Gateway (HTTP API, payload v2.0), routed by reading template.yaml.

It invokes the very handlers the template deploys with the events API Gateway would send. Dev auth stands
in for the authorizers, on loopback only: `Authorization: Bearer dev:<userId>` for JWT routes (the claim
`sub`), `Bearer automation:<name>` for IAM routes. Loopback means the bound address and the `Host` header:
a request whose `Host` is not loopback (DNS rebinding) gets 421 `HOST_NOT_ALLOWED` before any routing
(`workspace_memory.loopback`).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from scripts.localstack.moto_server import require_loopback
from scripts.localstack.powertools_threads import per_thread_events
from scripts.localstack.template import Route, load_template, routes
from workspace_memory.api.errors import error_envelope
from workspace_memory.loopback import LoopbackOnlyHandler

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


@dataclass
class FakeContext:
    """The attributes powertools reads from a Lambda context."""

    function_name: str
    aws_request_id: str
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:000000000000:function:local"
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"
    deadline: float = 0.0

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json"},
        "body": json.dumps(error_envelope(code, message).wire()),
    }


def _authorizer(kind: str, authorization: str | None) -> dict[str, Any] | None:
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


class Gateway:
    """Routes requests to handlers loaded from the template's CodeUri/Handler.

    Like Lambda, each loaded handler (an "execution environment") serves one request at a time: a request that
    finds every instance of its function busy loads another. A handler's resolver keeps per-request state
    (the current event, the matched route its response is validated against), so two concurrent requests on
    one instance would answer each other's routes; and since Powertools keeps the current event per process,
    not per instance, each thread gets its own (`powertools_threads`).
    """

    def __init__(self, template_path: Path | None = None, timeout_seconds: float = 30.0) -> None:
        per_thread_events()  # instances share one process, so Powertools' per-process event must be per thread
        self.routes: list[Route] = routes(load_template(template_path) if template_path else load_template())
        self._idle: dict[str, list[LambdaHandler]] = {}
        self._loaded: dict[str, int] = {}
        self._load_lock = threading.Lock()
        self._timeout = timeout_seconds

    def _take(self, route: Route) -> LambdaHandler:
        """An idle instance of the route's function, or a newly loaded one (a cold start)."""
        with self._load_lock:
            idle = self._idle.setdefault(route.function, [])
            if idle:
                return idle.pop()
            count = self._loaded[route.function] = self._loaded.get(route.function, 0) + 1
            module_name, _, attr = route.handler.rpartition(".")
            module = _load_module(f"lambda_{route.function}_{count}", route.code_dir / f"{module_name}.py")
            handler: LambdaHandler = getattr(module, attr)
            return handler

    def _give_back(self, route: Route, handler: LambdaHandler) -> None:
        with self._load_lock:
            self._idle[route.function].append(handler)

    def invoke(
        self, method: str, raw_url: str, headers: dict[str, str], body: bytes, source_ip: str = "127.0.0.1"
    ) -> dict[str, Any]:
        url = urlsplit(raw_url)
        for route in self.routes:
            params = route.match(method, url.path)
            if params is None:
                continue
            lower = {k.lower(): v for k, v in headers.items()}
            authorizer = _authorizer(route.auth, lower.get("authorization"))
            if authorizer is None:
                return _error(401, "UNAUTHENTICATED", "missing or invalid dev credentials for this route")
            event = _event(route, method, url.path, url.query, lower, body, params, authorizer, source_ip)
            context = FakeContext(
                function_name=route.function,
                aws_request_id=event["requestContext"]["requestId"],
                deadline=time.monotonic() + self._timeout,
            )
            handler = self._take(route)
            try:
                return handler(event, context)
            finally:
                self._give_back(route, handler)
        return _error(404, "ROUTE_NOT_FOUND", "no such route")


def _load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _event(
    route: Route,
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
    params: dict[str, str],
    authorizer: dict[str, Any],
    source_ip: str,
) -> dict[str, Any]:
    now = time.time()
    pairs = parse_qsl(query, keep_blank_values=True)
    qs: dict[str, str] = {}
    for key, value in pairs:
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
    if authorizer:
        context["authorizer"] = authorizer
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


def make_server(gateway: Gateway, host: str = "127.0.0.1", port: int = 3000) -> ThreadingHTTPServer:
    require_loopback(host)

    class Handler(LoopbackOnlyHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body are written separately: with Nagle's algorithm and the client's delayed ACK that
        # would add ~40 ms to every response, an artifact API Gateway does not have.
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            result = gateway.invoke(self.command, self.path, dict(self.headers.items()), body, self.client_address[0])
            payload = result.get("body") or ""
            data = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode("utf-8")
            self.send_response(int(result.get("statusCode", 200)))
            for key, value in (result.get("headers") or {}).items():
                self.send_header(key, str(value))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the handlers log structured lines themselves; never echo bodies here

    return _Server((host, port), Handler)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 resets bursts of concurrent clients
