"""The local servers' `Host` guard (DNS rebinding): a table of hostile spellings, properties, and the request
handler mixin driven through in-memory streams (no sockets)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.provisional import domains

from workspace_memory.kernel.loopback import (
    CODE,
    STATUS,
    LoopbackOnlyHandler,
    is_local_request,
    is_loopback_host,
    is_loopback_origin,
)

pytestmark = pytest.mark.unit

ALLOWED = [
    "localhost",
    "localhost:3000",
    "LOCALHOST:3000",
    "LocalHost",
    "127.0.0.1",
    "127.0.0.1:5000",
    "127.0.0.1:1",
    "127.0.0.1:65535",
    "127.1.2.3:8888",
    "127.255.255.255",
    "[::1]",
    "[::1]:8888",
    "[0:0:0:0:0:0:0:1]:3000",
    "[0::1]",
    " localhost:3000",  # surrounding OWS is not part of the field value
    "127.0.0.1:3000\t",
]

HOSTILE = [
    None,
    "",
    " ",
    "evil.example",
    "attacker.com:3000",
    # names that merely contain or resemble localhost / a loopback address
    "localhost.",
    "localhost.:3000",
    "localhost.evil.com",
    "localhost.evil.com:3000",
    "evil.localhost",
    "a.b.localhost:3000",
    "localhost-evil.com",
    "xlocalhost",
    "127.0.0.1.nip.io",
    "127.0.0.1.nip.io:3000",
    "127-0-0-1.nip.io",
    "www.127.0.0.1.xip.io",
    "0x7f000001.evil",
    # userinfo, paths, queries, fragments, several hosts
    "user@127.0.0.1",
    "127.0.0.1@evil.example",
    "localhost:3000@evil.example",
    "evil.example#@localhost",
    "evil.example?.localhost",
    "localhost/evil",
    "localhost:3000/",
    "localhost\\@evil.example",
    "localhost,evil.example",
    "127.0.0.1, evil.example",
    "localhost evil.example",
    "localhost\r\nX-Evil: 1",
    "localhost\n",
    "localhost\x00.evil.example",
    # other IPv4 spellings resolvers accept for 127.0.0.1, and non-loopback addresses
    "127.1",
    "127.0.1",
    "2130706433",
    "0x7f.0.0.1",
    "0x7f000001",
    "0177.0.0.1",
    "127.000.000.001",
    "127.0.0.01",
    "127.0.0.256",
    "127.0.0.1.",
    "0.0.0.0",
    "0.0.0.0:3000",
    "10.0.0.1",
    "169.254.169.254",
    "128.0.0.1",
    "126.255.255.255",
    # IPv6 other than ::1, or spelled outside the bracketed form
    "::1",
    "::1:3000",
    "[::1",
    "::1]",
    "[::]",
    "[::2]",
    "[::1%lo]",
    "[::1%25lo]:3000",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[fe80::1]",
    "[::1]evil.example",
    "[::1].evil.example",
    "[[::1]]",
    # ports
    "localhost:",
    "localhost:0",
    "localhost:65536",
    "localhost:123456",
    "localhost:+80",
    "localhost:-1",
    "localhost:80:80",
    "localhost: 80",
    "localhost:0x50",
    "localhost:\uff18\uff10",  # fullwidth digits
    # non-ASCII look-alikes (NFKC or case folding would turn some into ASCII; the guard must not)
    "\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54",  # fullwidth "localhost"
    "1\uff127.0.0.1",
    "loca\u217chost",  # small roman numeral fifty
    "loc\u0430lhost",  # Cyrillic a
    "LOCALHOS\u0162",
    "localhost\u200b",
    "localhost\u3002evil.example",  # ideographic full stop, a dot to IDNA
    "xn--localhost-",
]


@pytest.mark.parametrize("host", ALLOWED)
def test_loopback_hosts_are_allowed(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", HOSTILE)
def test_hostile_hosts_are_refused(host: str | None) -> None:
    assert not is_loopback_host(host)


_PORT = st.integers(1, 65535).map(lambda p: f":{p}")
_OPTIONAL_PORT = st.one_of(st.just(""), _PORT)


@given(st.sets(st.integers(0, 8)), _OPTIONAL_PORT)
def test_any_case_of_localhost_with_any_port(upper: set[int], port: str) -> None:
    name = "".join(c.upper() if i in upper else c for i, c in enumerate("localhost"))
    assert is_loopback_host(name + port)


@given(st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)), _OPTIONAL_PORT)
def test_all_of_127_slash_8(octets: tuple[int, int, int], port: str) -> None:
    assert is_loopback_host("127.{}.{}.{}".format(*octets) + port)


@given(st.ip_addresses(v=4), _OPTIONAL_PORT)
def test_ipv4_outside_127_slash_8(address: Any, port: str) -> None:
    assert is_loopback_host(f"{address}{port}") is str(address).startswith("127.")


@given(st.ip_addresses(v=6), _OPTIONAL_PORT)
def test_ipv6_other_than_loopback(address: Any, port: str) -> None:
    assert is_loopback_host(f"[{address}]{port}") is (str(address) == "::1")
    assert not is_loopback_host(f"{address}{port}")  # unbracketed


@given(domains(), _OPTIONAL_PORT)
@example("localhost.com", "")
@example("localhost.localdomain", ":3000")
def test_domain_names_are_refused(domain: str, port: str) -> None:
    assert not is_loopback_host(domain + port)


def _has(chars: str) -> st.SearchStrategy[str]:
    """Text with at least one character outside `chars`."""
    return st.text(min_size=1).filter(lambda text: any(c not in chars for c in text))


@given(st.sampled_from(["localhost", "127.0.0.1", "[::1]"]), _OPTIONAL_PORT, _has(" \t"), _has("0123456789: \t"))
def test_anything_around_a_loopback_host_is_refused(host: str, port: str, before: str, after: str) -> None:
    """Any prefix but blanks, any suffix but blanks or more digits of an address or port: refused."""
    assert not is_loopback_host(before + host + port)
    assert not is_loopback_host(host + port + after)
    assert not is_loopback_host(before + host + port + after)


@given(st.text())
def test_never_raises(host: str) -> None:
    assert is_loopback_host(host) in (True, False)


@pytest.mark.parametrize(
    ("fields", "target", "local"),
    [
        (["127.0.0.1:3000"], "/v1/workspaces", True),
        (["localhost:3000"], "/v1/workspaces?x=1", True),
        (["[::1]:3000"], "*", True),
        (["127.0.0.1:3000"], "http://localhost:3000/v1/workspaces", True),
        (None, "/v1/workspaces", False),
        ([], "/v1/workspaces", False),
        (["evil.example"], "/v1/workspaces", False),
        (["127.0.0.1:3000", "127.0.0.1:3000"], "/v1/workspaces", False),
        (["127.0.0.1:3000", "evil.example"], "/v1/workspaces", False),
        (["evil.example", "127.0.0.1:3000"], "/v1/workspaces", False),
        # an absolute-form target's authority takes precedence over Host (RFC 9112 §3.2.2)
        (["127.0.0.1:3000"], "http://evil.example/v1/workspaces", False),
        (["127.0.0.1:3000"], "http://evil.example:3000@127.0.0.1/v1/workspaces", False),
        (["127.0.0.1:3000"], "http:///v1/workspaces", False),
        (["127.0.0.1:3000"], "evil.example:443", False),  # authority-form (CONNECT)
        (["127.0.0.1:3000"], "v1/workspaces", False),
    ],
)
def test_is_local_request(fields: list[str] | None, target: str, local: bool) -> None:
    assert is_local_request(fields, target) is local


@pytest.mark.parametrize(
    ("origin", "loopback"),
    [
        ("http://localhost:8233", True),
        ("http://127.0.0.1:8233", True),
        ("https://[::1]:8233", True),
        ("http://localhost", True),
        ("*", False),
        ("null", False),
        ("", False),
        ("http://localhost:8233/", False),
        ("http://localhost:8233/ui", False),
        ("ftp://localhost:8233", False),
        ("http://evil.example:8233", False),
        ("http://localhost.evil.example:8233", False),
        ("http://user@localhost:8233", False),
        ("localhost:8233", False),
    ],
)
def test_is_loopback_origin(origin: str, loopback: bool) -> None:
    assert is_loopback_origin(origin) is loopback


# --- the handler mixin, driven without a socket --------------------------------------------------------


class _Recording(LoopbackOnlyHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, raw: bytes) -> None:  # no socket: the streams BaseRequestHandler would build
        self.rfile = io.BytesIO(raw)
        self.output = self.wfile = io.BytesIO()
        self.client_address = ("127.0.0.1", 50000)
        self.served: list[str] = []

    def do_POST(self) -> None:
        self.served.append(self.path)
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _exchange(host_lines: str, target: str = "/v1/workspaces", method: str = "POST") -> tuple[_Recording, bytes]:
    body = b'{"name": "team"}'
    raw = (
        f"{method} {target} HTTP/1.1\r\n{host_lines}Content-Length: {len(body)}\r\n"
        "Authorization: Bearer dev:alice\r\n\r\n"
    ).encode("latin-1") + body
    handler = _Recording(raw)
    handler.handle_one_request()
    return handler, handler.output.getvalue()


@pytest.mark.parametrize(
    "host_lines",
    [
        "Host: evil.example\r\n",
        "Host: attacker.com:3000\r\n",
        "Host: localhost.evil.com:3000\r\n",
        "",
        "Host: 127.0.0.1:3000\r\nHost: evil.example\r\n",
    ],
)
@pytest.mark.parametrize("method", ["POST", "DELETE", "BREW"])  # refused before any do_* lookup
def test_mixin_refuses_before_the_handler_and_the_body(host_lines: str, method: str) -> None:
    handler, response = _exchange(host_lines, method=method)
    assert handler.served == []
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {STATUS} Misdirected Request".encode())
    assert b"Connection: close" in head
    assert json.loads(body)["error"]["code"] == CODE
    assert handler.close_connection
    assert handler.rfile.read() == b'{"name": "team"}'  # the body was never read


def test_mixin_refuses_a_foreign_absolute_form_target() -> None:
    handler, response = _exchange("Host: 127.0.0.1:3000\r\n", target="http://evil.example/v1/workspaces")
    assert handler.served == []
    assert response.startswith(b"HTTP/1.1 421 ")


@pytest.mark.parametrize("host", ["127.0.0.1:3000", "localhost:3000", "[::1]:3000"])
def test_mixin_passes_loopback_requests_on(host: str) -> None:
    handler, response = _exchange(f"Host: {host}\r\n")
    assert handler.served == ["/v1/workspaces"]
    assert response.startswith(b"HTTP/1.1 201 ")
