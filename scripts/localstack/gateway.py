"""A local stand-in for API Gateway (HTTP API, payload v2.0) in front of Lambda's execution model.

The routes come from template.yaml (`routing`); each function runs from the built artifact
(`scripts.artifact.build.build_dir("host")`, rebuilt first when stale) in execution environments of its own:
one OS process per environment, one request at a time each, scaled per function (`pool`,
`environments`, the child's side in `runtime`). The HTTP server's threads only move bytes.

Loopback only: a request whose `Host` is not loopback (DNS rebinding) gets 421 `HOST_NOT_ALLOWED` before
any routing (`workspace_memory.kernel.loopback`). A request must say how long its body is: a Content-Length that is
not one decimal number gets 400 `INVALID_CONTENT_LENGTH`, one over Lambda's 6 MB payload 413
`PAYLOAD_TOO_LARGE`, a chunked body 411 `LENGTH_REQUIRED`, and a body that stops arriving for `read_timeout`
seconds 408 `REQUEST_TIMEOUT`; each closes the connection (what is left of the body cannot be framed).
"""

from __future__ import annotations

import base64
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from scripts.localstack.environments import ColdStart, Launcher
from scripts.localstack.functions import FunctionSpec, function_specs
from scripts.localstack.inprocess import InProcessEnvironment, tee_service_logs
from scripts.localstack.moto_server import require_loopback
from scripts.localstack.pool import DEFAULT_CAP, Environments
from scripts.localstack.routing import Router, error_response
from scripts.localstack.runtime import MAX_PAYLOAD_BYTES, LambdaContext
from scripts.localstack.template import load_template, routes
from workspace_memory.kernel.loopback import LoopbackOnlyHandler

FakeContext = LambdaContext
"""The name unit tests import for a context to call a resolver with."""

READ_TIMEOUT_SECONDS = 10.0
_DIGITS = re.compile(r"[0-9]{1,20}")

Mode = Literal["processes", "threads"]


def built_artifact() -> Path:
    """The host build, rebuilt first when its inputs changed (a digest check when they did not)."""
    from scripts.artifact.build import build

    return build("host")


class Gateway:
    """The template's routes in front of its functions' execution environments.

    `mode="processes"` (the local stack): environment processes from the built artifact, each with the
    environment the template gives its function on this stack (`environment`: `LocalStack.environment()`),
    their output to `log` (a file, appended) or this process's stderr. `mode="threads"`: the old in-process
    handlers, for the benchmark and mutation testing (`scripts.localstack.inprocess`), their service log
    lines appended to `log` too.
    """

    def __init__(
        self,
        environment: Mapping[str, str] | None = None,
        *,
        mode: Mode = "processes",
        build: Path | None = None,
        template_path: Path | None = None,
        cap: int = DEFAULT_CAP,
        log: Path | None = None,
    ) -> None:
        template = load_template(template_path) if template_path else load_template()
        self.routes = routes(template)
        self._log_fd = None if log is None else os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._launcher: Launcher | None = None
        self._untee: Callable[[], None] | None = None
        if mode == "threads":
            specs = function_specs(template, None)
            start: Any = InProcessEnvironment
            self._untee = None if log is None else tee_service_logs(log)
        else:
            specs = function_specs(template, build or built_artifact())
            self._launcher = Launcher(specs, environment or {}, log=self._log_fd, on_cold_start=self._cold_start)
            start = self._launcher
        self.environments = Environments(specs, start, cap)
        self._router = Router(self.routes, self.environments.invoke)

    @property
    def specs(self) -> dict[str, FunctionSpec]:
        return self.environments.specs

    def _cold_start(self, cold: ColdStart) -> None:
        """Recorded, and reported in the log as Lambda's REPORT line reports an Init Duration."""
        self.environments.record(cold)
        line = (
            f"COLD START {cold.function} pid {cold.pid}: init {cold.init_ms:.0f} ms, "
            f"first response {cold.first_response_ms:.0f} ms\n"
        )
        if self._log_fd is None:
            sys.stderr.write(line)
        else:
            os.write(self._log_fd, line.encode())

    def cold_starts(self) -> list[ColdStart]:
        return self.environments.cold_starts()

    def invoke(
        self, method: str, raw_url: str, headers: dict[str, str], body: bytes, source_ip: str = "127.0.0.1"
    ) -> dict[str, Any]:
        return self._router.handle(method, raw_url, headers, body, source_ip)

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.environments.close()
        if self._launcher is not None:
            self._launcher.close()
        if self._untee is not None:
            self._untee()
            self._untee = None
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None


def _content_length(values: list[str] | None) -> int | None:
    """The one Content-Length, or None when it is not exactly one decimal number."""
    if not values:
        return 0
    if len(values) != 1 or not _DIGITS.fullmatch(values[0].strip(" \t")):
        return None
    return int(values[0])


def make_server(
    gateway: Gateway, host: str = "127.0.0.1", port: int = 3000, read_timeout: float = READ_TIMEOUT_SECONDS
) -> ThreadingHTTPServer:
    require_loopback(host)

    class Handler(LoopbackOnlyHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body are written separately: with Nagle's algorithm and the client's delayed ACK that
        # would add ~40 ms to every response, an artifact API Gateway does not have.
        disable_nagle_algorithm = True
        timeout = read_timeout  # every read of the socket: the request line, headers, body, the next request

        def _serve(self) -> None:
            body = self._body()
            if body is None:
                return
            result = gateway.invoke(self.command, self.path, dict(self.headers.items()), body, self.client_address[0])
            self._answer(result)

        def _body(self) -> bytes | None:
            """The request's body, or None once it has been refused (with the connection closed)."""
            if self.headers.get("transfer-encoding") is not None:
                self._refuse(411, "LENGTH_REQUIRED", "send the body with a Content-Length")
                return None
            length = _content_length(self.headers.get_all("content-length"))
            if length is None:
                self._refuse(400, "INVALID_CONTENT_LENGTH", "Content-Length must be one decimal number")
                return None
            if length > MAX_PAYLOAD_BYTES:
                self._refuse(413, "PAYLOAD_TOO_LARGE", f"request body over {MAX_PAYLOAD_BYTES} bytes")
                return None
            try:
                body = self.rfile.read(length) if length else b""
            except TimeoutError:
                self._refuse(408, "REQUEST_TIMEOUT", f"the body stopped arriving for {read_timeout:g}s")
                return None
            if len(body) < length:  # the client closed its side
                self.close_connection = True
                return None
            return body

        def _refuse(self, status: int, code: str, message: str) -> None:
            self.close_connection = True
            self._answer(error_response(status, code, message), close=True)

        def _answer(self, result: dict[str, Any], *, close: bool = False) -> None:
            payload = result.get("body") or ""
            data = base64.b64decode(payload) if result.get("isBase64Encoded") else str(payload).encode("utf-8")
            self.send_response(int(result.get("statusCode", 200)))
            for key, value in (result.get("headers") or {}).items():
                self.send_header(key, str(value))
            for cookie in result.get("cookies") or []:
                self.send_header("Set-Cookie", str(cookie))
            self.send_header("Content-Length", str(len(data)))
            if close:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the handlers log structured lines themselves; never echo bodies here

    return _Server((host, port), Handler)


@contextmanager
def serving(
    gateway: Gateway, host: str = "127.0.0.1", port: int = 0, read_timeout: float = READ_TIMEOUT_SECONDS
) -> Iterator[str]:
    """`gateway` served from a thread while the block runs (port 0: a free one); its base URL."""
    server = make_server(gateway, host, port, read_timeout)
    try:
        threading.Thread(target=server.serve_forever, name="local-gateway", daemon=True).start()
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 resets bursts of concurrent clients
