"""The worker's automation client against a real loopback HTTP server: which answers are worth a retry."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from workflows.automation import Admission, ApiUnavailable, AutomationApi, DevAuth

pytestmark = pytest.mark.integration


class Scripted(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        body = json.dumps({"error": {"code": "X", "message": "m"}}).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[ThreadingHTTPServer, str]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("status", [429, 500, 503])
def test_throttled_and_failing_answers_are_retried_not_reported(
    server: tuple[ThreadingHTTPServer, str], status: int
) -> None:
    Scripted.status = status
    api = AutomationApi(server[1], DevAuth("worker"))
    with pytest.raises(ApiUnavailable):
        api.notes_get(Admission("adm", "cred"), "s-1")


@pytest.mark.parametrize("status", [400, 403, 404, 409, 413])
def test_refusals_are_answers_the_caller_sees(server: tuple[ThreadingHTTPServer, str], status: int) -> None:
    Scripted.status = status
    response = AutomationApi(server[1], DevAuth("worker")).notes_get(Admission("adm", "cred"), "s-1")
    assert (response.status, response.error_code) == (status, "X")
