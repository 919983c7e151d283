"""A loopback-only Temporal codec server, so an operator can read encrypted histories in the UI or CLI.

    python -m workflows.codec_server --port 8888      # env as for the service: KMS_KEY_ID, TABLE_NAME, ...
    temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8888
    temporal workflow show -w <id> --codec-endpoint http://127.0.0.1:8888

Protocol (Temporal remote codec): `POST /encode` and `POST /decode` (optionally under a prefix, e.g.
`/<namespace>/decode`) with a JSON body `{"payloads": [...]}`, payloads in protobuf JSON form; the
response has the same shape. `OPTIONS` answers the browser's CORS preflight.

Whoever can reach this server can decrypt payloads, so it binds to loopback only, it refuses requests
from any browser origin other than the UI's (a web page cannot use it from another tab; the allowed
origins must themselves be loopback origins, never `*`), and it answers a `Host` that is not loopback (DNS
rebinding) with 421 `HOST_NOT_ALLOWED` before reading the body (`workspace_memory.kernel.loopback`). The request
logic is the pure `handle_request`.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import socket
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any, cast

from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.converter import PayloadCodec

from workspace_memory.adapters.aws import build_clients
from workspace_memory.adapters.temporal_codec import KmsPayloadCodec, payload_cipher
from workspace_memory.kernel import loopback
from workspace_memory.kernel.settings import Settings, SettingsError

DEFAULT_PORT = 8888
DEFAULT_UI_ORIGINS = ("http://localhost:8233", "http://127.0.0.1:8233")
MAX_BODY = 32 * 1024 * 1024
_ALLOW_HEADERS = "Content-Type, X-Namespace, Authorization"
_SETUP = (
    "Give it the service's environment (TABLE_NAME, KMS_KEY_ID, AWS_REGION and credentials; AWS_ENDPOINT_URL "
    "for a local endpoint). `make dev` runs one for its own stack: see the line 'codec server' of its banner"
)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def is_loopback(host: str) -> bool:
    """`host` is "localhost" or a loopback IP address (no port)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_payloads(body: bytes) -> Payloads:
    """A request body `{"payloads": [...]}` (protobuf JSON) as `Payloads`; ValueError/ParseError if malformed."""
    request: Any = json.loads(body)
    if not isinstance(request, dict):
        raise ValueError("body must be a JSON object")
    return ParseDict(request, Payloads())


def render_payloads(payloads: Sequence[Payload]) -> bytes:
    return json.dumps({"payloads": [MessageToDict(p) for p in payloads]}).encode()


async def transform(codec: PayloadCodec, operation: str, payloads: Payloads) -> list[Payload]:
    if operation == "encode":
        return await codec.encode(payloads.payloads)
    if operation == "decode":
        return await codec.decode(payloads.payloads)
    raise ValueError(f"unknown operation {operation!r}")


def _json_error(status: int, message: str, headers: dict[str, str]) -> Response:
    return Response(status, json.dumps({"message": message}).encode(), {**headers, "Content-Type": "application/json"})


def handle_request(
    codec: PayloadCodec,
    method: str,
    path: str,
    body: bytes,
    *,
    origin: str | None,
    host: str | None,
    allowed_origins: Collection[str] = DEFAULT_UI_ORIGINS,
) -> Response:
    """The whole request -> response logic, without sockets."""
    if not loopback.is_loopback_host(host):
        return Response(loopback.STATUS, loopback.refusal_body(), {"Content-Type": "application/json"})
    if origin is not None and origin not in allowed_origins:
        return _json_error(403, "origin not allowed", {})
    cors = (
        {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Credentials": "true",
            "Access-Control-Allow-Methods": "POST, OPTIONS",
            "Access-Control-Allow-Headers": _ALLOW_HEADERS,
            "Vary": "Origin",
        }
        if origin is not None
        else {}
    )
    operation = path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    if operation not in ("encode", "decode"):
        return _json_error(404, "not found", cors)
    if method == "OPTIONS":
        return Response(204, headers=cors)
    if method != "POST":
        return _json_error(405, "method not allowed", {**cors, "Allow": "POST, OPTIONS"})
    try:
        request = parse_payloads(body)
    except (ValueError, ParseError) as exc:  # json.JSONDecodeError is a ValueError
        return _json_error(400, f"malformed request ({type(exc).__name__})", cors)
    try:
        out = asyncio.run(transform(codec, operation, request))
    except Exception as exc:  # a payload the cipher rejects, or KMS unavailable; never echo payload text
        return _json_error(500, f"{operation} failed ({type(exc).__name__})", cors)
    return Response(200, render_payloads(out), {**cors, "Content-Type": "application/json"})


class CodecHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, codec: PayloadCodec, host: str, port: int, allowed_origins: Collection[str] = DEFAULT_UI_ORIGINS
    ) -> None:
        if not is_loopback(host):
            raise ValueError(f"codec server binds to loopback only, not {host!r}")
        foreign = sorted(o for o in allowed_origins if not loopback.is_loopback_origin(o))
        if foreign:
            raise ValueError(f"codec server allows loopback UI origins only, not {', '.join(foreign)}")
        self.codec = codec
        self.allowed_origins = frozenset(allowed_origins)
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), _Handler)


class _Handler(loopback.LoopbackOnlyHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self._serve()

    def do_OPTIONS(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def _serve(self) -> None:
        server = cast(CodecHTTPServer, self.server)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._send(_json_error(413 if length > MAX_BODY else 400, "bad Content-Length", {}))
            self.close_connection = True
            return
        body = self.rfile.read(length) if length else b""
        self._send(
            handle_request(
                server.codec,
                self.command,
                self.path,
                body,
                origin=self.headers.get("Origin"),
                host=self.headers.get("Host"),
                allowed_origins=server.allowed_origins,
            )
        )

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)


def _settings(parser: argparse.ArgumentParser) -> Settings:
    """The service's settings and credentials, or a usage error saying what to set: a codec server that
    starts without them would answer every `/decode` with a 500."""
    import boto3

    try:
        settings = Settings.from_environ(os.environ)
    except SettingsError as exc:
        parser.error(f"{exc}. {_SETUP}")
    if boto3.session.Session(region_name=settings.region).get_credentials() is None:
        parser.error(f"no AWS credentials (it calls KMS to decrypt). {_SETUP}")
    return settings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m workflows.codec_server", description="Loopback Temporal codec server (KMS)."
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any)")
    parser.add_argument(
        "--ui-origin",
        action="append",
        dest="origins",
        help=f"loopback browser origin allowed to call (repeatable; default {', '.join(DEFAULT_UI_ORIGINS)})",
    )
    args = parser.parse_args(argv)
    if not is_loopback(args.host):
        parser.error(f"codec server binds to loopback only, not {args.host!r}")
    for origin in args.origins or ():
        if not loopback.is_loopback_origin(origin):
            parser.error(f"--ui-origin must be a loopback origin such as http://localhost:8233, not {origin!r}")
    settings = _settings(parser)
    codec = KmsPayloadCodec(payload_cipher(build_clients(settings).kms, settings.kms_key_id))
    server = CodecHTTPServer(codec, args.host, args.port, args.origins or DEFAULT_UI_ORIGINS)
    host, port = server.server_address[:2]
    print(f"codec server on http://{host!s}:{port} (UI origins: {', '.join(sorted(server.allowed_origins))})")
    print(f"READY {port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
