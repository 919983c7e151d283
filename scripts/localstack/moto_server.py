"""moto's server (DynamoDB + KMS), with every request serialized behind one lock.

moto alone is not linearizable under concurrent requests (two winners of one conditional transaction
were seen here in 2 of 150 rounds), so race tests against it would flake for moto's reasons. One lock
around the WSGI app makes each request atomic, like the real services' conditional writes.

Run as a process: `python -m scripts.localstack.moto_server --port 5000`; it prints `READY <port>` once
it is listening (port 0 picks a free one), which is what callers wait for.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

StartResponse = Callable[..., Any]


class Serialized:
    """WSGI middleware: one request at a time, body fully produced inside the lock."""

    def __init__(self, app: Callable[[dict[str, Any], StartResponse], Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        with self._lock:
            result = self._app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


def require_loopback(host: str) -> None:
    if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
        raise SystemExit(f"refusing to bind {host}: the local stack listens on loopback only")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args(argv)
    require_loopback(args.host)
    app = Serialized(DomainDispatcherApplication(create_backend_app))
    server = make_server(args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler)
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
