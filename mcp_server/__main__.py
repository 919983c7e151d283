"""`python -m mcp_server` (stdio) or `python -m mcp_server --http --port N` (streamable HTTP on loopback)."""

from __future__ import annotations

import argparse
import os
import sys

from .config import ConfigError, McpConfig
from .delegation import build_delegation
from .server import build_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_server", description=__doc__)
    parser.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument(
        "--port", type=int, default=8765, help="the HTTP port on 127.0.0.1 (default 8765; 0: any free one)"
    )
    args = parser.parse_args(argv)
    try:
        config = McpConfig.from_environ(os.environ)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.http:
        from .http import TokenError, client_token, serve

        try:
            token, generated = client_token(os.environ)
        except TokenError as exc:
            print(exc, file=sys.stderr)
            return 2
        serve(build_server(build_delegation(config)), args.port, token, generated)
    else:
        build_server(build_delegation(config)).run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
