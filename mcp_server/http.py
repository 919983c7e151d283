"""The streamable HTTP transport, on loopback only and behind the repository's DNS-rebinding guard.

Binding to 127.0.0.1 does not stop a web page that rebinds its own name to 127.0.0.1 from calling the
server as a same-origin page; the `Host` check does (`workspace_memory.kernel.loopback`, the rule the gateway, the
moto server and the codec server follow), and a browser `Origin`, when sent, must be a loopback one too.
The SDK's own host check is turned off so that one rule, tested in tests/unit/kernel/test_loopback.py, decides.

Loopback is not a client identity: any process on the machine can connect. So every request must also present
the server's client secret, `Authorization: Bearer <secret>`, compared in constant time: `WM_MCP_HTTP_TOKEN`
when set (at least 32 characters), else a fresh one generated at start and printed once, after the URL, to
whoever started the server. stdio needs none: only the process that spawned the server holds its pipes.
"""

from __future__ import annotations

import hmac
import json
import secrets
import socket
from collections.abc import Mapping
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from workspace_memory.kernel import loopback

HOST = "127.0.0.1"
PATH = "/mcp"
TOKEN_ENV = "WM_MCP_HTTP_TOKEN"  # noqa: S105 (the variable's name, not a secret)
MIN_TOKEN_CHARS = 32

Scope = dict[str, Any]


class TokenError(ValueError):
    """The configured client secret is too short to be one; the message never quotes it."""


def client_token(env: Mapping[str, str]) -> tuple[str, bool]:
    """The secret clients must present, and whether it was generated here (then it is printed at start)."""
    configured = env.get(TOKEN_ENV, "")
    if configured:
        if len(configured) < MIN_TOKEN_CHARS:
            raise TokenError(f"{TOKEN_ENV} must be at least {MIN_TOKEN_CHARS} characters")
        return configured, False
    return secrets.token_urlsafe(32), True


class LoopbackOnly:
    """ASGI middleware, before the app runs: a non-loopback `Host` (or `Origin`) gets 421 `HOST_NOT_ALLOWED`;
    a request without the client secret gets 401 `UNAUTHENTICATED`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not _local(scope):
            await _refuse(send, loopback.STATUS, loopback.refusal_body())
            return
        if scope["type"] == "http" and not self._authorized(scope):
            body = {"error": {"code": "UNAUTHENTICATED", "message": "this server's client secret is required"}}
            await _refuse(send, 401, json.dumps(body).encode(), [(b"www-authenticate", b"Bearer")])
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        fields: list[tuple[bytes, bytes]] = scope.get("headers", [])
        presented = [value for name, value in fields if name == b"authorization"]
        return len(presented) == 1 and hmac.compare_digest(presented[0], self._expected)


async def _refuse(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _local(scope: Scope) -> bool:
    fields: list[tuple[bytes, bytes]] = scope.get("headers", [])
    hosts = [value.decode("latin-1") for name, value in fields if name == b"host"]
    origins = [value.decode("latin-1") for name, value in fields if name == b"origin"]
    if not loopback.is_local_request(hosts, "/"):
        return False
    return all(loopback.is_loopback_origin(origin) for origin in origins)


def app(server: MCPServer, token: str) -> LoopbackOnly:
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_app = server.streamable_http_app(streamable_http_path=PATH, transport_security=security, host=HOST)
    return LoopbackOnly(mcp_app, token)


def serve(server: MCPServer, port: int, token: str, generated: bool) -> None:
    """Serves until interrupted. The socket listens before the endpoint's URL is printed (port 0: any free
    one), so whoever reads that line can connect at once; a generated secret follows on the next line."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    print(f"serving http://{HOST}:{sock.getsockname()[1]}{PATH}", flush=True)
    if generated:
        print(f"client secret (send Authorization: Bearer <secret>): {token}", flush=True)
    config = uvicorn.Config(app(server, token), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
