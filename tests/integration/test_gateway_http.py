"""The local gateway's HTTP edge: a request must frame its body, and a client cannot hold a thread.

A body shorter than its Content-Length gets 408 after the read timeout; a Content-Length that is not one
decimal number gets 400, one over Lambda's payload quota 413, a chunked body 411: each an error envelope,
then the connection closed (what is left of such a body cannot be framed). A stalled client holds its own
connection only.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from scripts.localstack.gateway import Gateway, serving
from scripts.localstack.stack import LocalStack
from tests.support import FunctionLogs

pytestmark = pytest.mark.integration

READ_TIMEOUT = 1.0
WAIT_SECONDS = 30.0


@pytest.fixture(scope="module")
def edge(local_stack: LocalStack, function_logs: FunctionLogs) -> Iterator[tuple[str, int]]:
    """A gateway of the stack's functions with a one-second read timeout: (host, port)."""
    with (
        Gateway(local_stack.environment(), log=function_logs.path) as gateway,
        serving(gateway, read_timeout=READ_TIMEOUT) as url,
    ):
        parts = urlsplit(url)
        assert parts.hostname is not None
        assert parts.port is not None
        yield parts.hostname, parts.port


def exchange(edge: tuple[str, int], head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Sends the raw request and reads until the server closes the connection: status, headers, body."""
    with socket.create_connection(edge, timeout=WAIT_SECONDS) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\n" + body)
        received = b""
        while chunk := sock.recv(65536):  # ends when the server closes, or raises after WAIT_SECONDS
            received += chunk
    raw_head, _, payload = received.partition(b"\r\n\r\n")
    status_line, *lines = raw_head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, payload


def request_head(*fields: str) -> str:
    return "\r\n".join(["POST /v1/workspaces HTTP/1.1", "Host: 127.0.0.1", *fields, ""])


def test_a_body_shorter_than_its_content_length_gets_408_then_the_connection_closes(edge: tuple[str, int]) -> None:
    status, headers, body = exchange(edge, request_head("Content-Length: 100"), b'{"name": ')
    assert (status, headers["connection"]) == (408, "close")
    assert json.loads(body)["error"]["code"] == "REQUEST_TIMEOUT"


@pytest.mark.parametrize(
    ("fields", "status", "code"),
    [
        (["Content-Length: -1"], 400, "INVALID_CONTENT_LENGTH"),
        (["Content-Length: abc"], 400, "INVALID_CONTENT_LENGTH"),
        (["Content-Length: 5, 6"], 400, "INVALID_CONTENT_LENGTH"),
        (["Content-Length: 2", "Content-Length: 2"], 400, "INVALID_CONTENT_LENGTH"),
        (["Content-Length: 7000000"], 413, "PAYLOAD_TOO_LARGE"),
        (["Transfer-Encoding: chunked"], 411, "LENGTH_REQUIRED"),
    ],
)
def test_a_body_it_cannot_frame_is_refused_with_an_envelope(
    edge: tuple[str, int], fields: list[str], status: int, code: str
) -> None:
    answered, headers, body = exchange(edge, request_head(*fields), b"{}")
    assert (answered, headers["connection"]) == (status, "close")
    assert json.loads(body)["error"]["code"] == code


def test_a_stalled_client_holds_its_own_connection_only(edge: tuple[str, int]) -> None:
    with socket.create_connection(edge, timeout=WAIT_SECONDS) as stalled:
        stalled.sendall(request_head("Content-Length: 10").encode())  # and no body
        status, _, body = exchange(edge, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n")
        assert (status, json.loads(body)) == (200, {"status": "ok"})
