"""The streamable HTTP transport, on loopback only and behind the repository's DNS-rebinding guard.

Binding to 127.0.0.1 does not stop a web page that rebinds its own name to 127.0.0.1 from calling the
server as a same-origin page; the `Host` check does (`workspace_memory.loopback`, the rule the gateway, the
moto server and the codec server follow), and a browser `Origin`, when sent, must be a loopback one too.
The SDK's own host check is turned off so that one rule, tested in tests/unit/test_loopback.py, decides.
"""

from __future__ import annotations

import socket
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from workspace_memory import loopback

HOST = "127.0.0.1"
PATH = "/mcp"

Scope = dict[str, Any]


class LoopbackOnly:
    """ASGI middleware: a non-loopback `Host` (or `Origin`) gets 421 `HOST_NOT_ALLOWED` before the app runs."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not _local(scope):
            body = loopback.refusal_body()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": loopback.STATUS, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def _local(scope: Scope) -> bool:
    fields: list[tuple[bytes, bytes]] = scope.get("headers", [])
    hosts = [value.decode("latin-1") for name, value in fields if name == b"host"]
    origins = [value.decode("latin-1") for name, value in fields if name == b"origin"]
    if not loopback.is_local_request(hosts, "/"):
        return False
    return all(loopback.is_loopback_origin(origin) for origin in origins)


def app(server: MCPServer) -> LoopbackOnly:
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return LoopbackOnly(server.streamable_http_app(streamable_http_path=PATH, transport_security=security, host=HOST))


def serve(server: MCPServer, port: int) -> None:
    """Serves until interrupted. The socket listens before the endpoint's URL is printed (port 0: any free
    one), so whoever reads that line can connect at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    print(f"serving http://{HOST}:{sock.getsockname()[1]}{PATH}", flush=True)
    config = uvicorn.Config(app(server), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
