"""The local servers' DNS-rebinding guard: answer only requests addressed to loopback by name.

A web page can point a host name it controls at 127.0.0.1 (DNS rebinding) and then talk to a local server
as a same-origin page: to the gateway with `Bearer dev:<anyone>`, to moto, to the codec server. Binding
to loopback does not stop that; the `Host` header does, since the browser sends the page's host name.
So the gateway, the moto server and the codec server answer only when `Host` is, exactly:

- `localhost` (any letter case; not `localhost.`, not `*.localhost`, not `localhost.evil.com`),
- a dotted-quad IPv4 address in 127.0.0.0/8 (strict decimal: no `127.1`, `0x7f.0.0.1`, `0177.0.0.1`),
- the IPv6 loopback in brackets, `[::1]` or a longer spelling of it (no zone id, no IPv4-mapped form),

each with an optional port of 1 to 5 ASCII digits (at most 65535). Any port is accepted, not only the
server's own: the port adds nothing against rebinding (the attacker's name is what gets refused) and
port forwarding (ssh -L, an editor's tunnel, a container mapping) legitimately changes it. Userinfo,
paths, spaces inside, several `Host` fields, or no `Host` at all are refused.

Refusals are `421 Misdirected Request` (RFC 9110 §15.5.20: this server is not authoritative for that
host), with the JSON body `{"error": {"code": "HOST_NOT_ALLOWED", "message": ...}}`, sent before any
handler runs. Standard library only: the moto server imports this without the service's dependencies.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

STATUS = 421
REASON = "Misdirected Request"
CODE = "HOST_NOT_ALLOWED"
MESSAGE = "this local server answers only to a loopback Host: localhost, 127.0.0.0/8 or [::1]"

# host [":" port]: localhost, a dotted quad or a bracketed IPv6 literal (hex digits and colons only).
_HOST = re.compile(r"(?P<host>localhost|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|\[[0-9a-f:]+\])(?::(?P<port>[0-9]{1,5}))?")


def is_loopback_host(host: str | None) -> bool:
    """Whether one `Host` field value names this machine's loopback (see the module docstring)."""
    if host is None or not host.isascii():  # before lower(): "\u212a".lower() == "k"
        return False
    match = _HOST.fullmatch(host.strip(" \t").lower())  # surrounding OWS is not part of a field value
    if match is None:
        return False
    port = match["port"]
    if port is not None and not 0 < int(port) <= 65535:
        return False
    name = match["host"]
    if name == "localhost":
        return True
    try:
        if name.startswith("["):
            return ipaddress.IPv6Address(name[1:-1]) == ipaddress.IPv6Address("::1")
        return ipaddress.IPv4Address(name) in ipaddress.IPv4Network("127.0.0.0/8")
    except ValueError:  # a name other than localhost, or a malformed literal (e.g. an octet above 255)
        return False


def is_local_request(host_fields: Sequence[str] | None, target: str) -> bool:
    """One loopback `Host` field, and, for an absolute-form target (`GET http://host/path`), whose
    authority takes precedence over `Host` (RFC 9112 §3.2.2), a loopback authority too."""
    if not host_fields or len(host_fields) != 1 or not is_loopback_host(host_fields[0]):
        return False
    if target.startswith("/") or target == "*":
        return True
    parts = urlsplit(target)
    return bool(parts.scheme) and is_loopback_host(parts.netloc)


def is_loopback_origin(origin: str) -> bool:
    """Whether a browser origin (`scheme://host[:port]`, as in an `Origin` header) is a loopback one."""
    parts = urlsplit(origin)
    return (
        parts.scheme in ("http", "https")
        and origin == f"{parts.scheme}://{parts.netloc}"  # nothing after the authority, not even "/"
        and is_loopback_host(parts.netloc)
    )


def refusal_body() -> bytes:
    return json.dumps({"error": {"code": CODE, "message": MESSAGE}}).encode()


class LoopbackOnlyHandler(BaseHTTPRequestHandler):
    """A `BaseHTTPRequestHandler` that refuses a non-local request right after parsing its head, whatever
    the method: before any `do_*` method runs and before its body is read (so the connection is closed)."""

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if is_local_request(self.headers.get_all("Host"), self.path):
            return True
        body = refusal_body()
        self.close_connection = True
        self.send_response(STATUS, REASON)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return False
