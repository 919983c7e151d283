"""The memory frame (docs/architecture.md#the-memory-frame): the static web page at /app/ — plain HTML, CSS and ES
modules, no data.

The page's files are read once per cold start from `static/` beside this module; a request names one of them
by its file name, never a path, so nothing outside that folder can be served. The files need no auth (they
hold no data); every API call the page makes carries the person's own token. Each answer has its content type,
`nosniff`, and a Content-Security-Policy that allows only this origin (no inline script or style, no frames).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import Response

from workspace_memory.api.http import build_resolver, lambda_entry
from workspace_memory.api.page_headers import BASE_POLICY, page_headers
from workspace_memory.kernel import errors

STATIC = Path(__file__).with_name("static")
INDEX = "index.html"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
CSP = f"{BASE_POLICY}; script-src 'self'; style-src 'self'; img-src 'self'"
"""Only this origin: the page's own modules and stylesheet, and the API on the same host."""
SECURITY_HEADERS = page_headers(CSP)

app = build_resolver()


@cache
def assets() -> dict[str, tuple[str, str]]:
    """File name → (content type, text) for every servable file of `static/`."""
    return {
        path.name: (CONTENT_TYPES[path.suffix], path.read_text(encoding="utf-8"))
        for path in sorted(STATIC.iterdir())
        if path.is_file() and path.suffix in CONTENT_TYPES
    }


def _serve(name: str) -> Response[str]:
    found = assets().get(name)
    if found is None:
        raise errors.AssetNotFound("the frame has no such file")
    content_type, text = found
    return Response(status_code=200, content_type=content_type, body=text, headers=dict(SECURITY_HEADERS))


@app.get(
    "/app/",
    summary="The memory frame (web page)",
    description=(
        "The page people use to read, edit and govern a workspace's memory in a browser. No authentication on the "
        "page itself; it calls the API as the signed-in person."
    ),
    responses={200: {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}}},
)
def frame_page() -> Response[str]:
    """The memory frame's page."""
    return _serve(INDEX)


@app.get(
    "/app/<file>",
    summary="One of the memory frame's files",
    description=(
        "A stylesheet or ES module of the frame's page, by name; any other name is 404 `ASSET_NOT_FOUND`. No "
        "authentication."
    ),
    responses={
        200: {"description": "a stylesheet or an ES module", "content": {"text/plain": {"schema": {"type": "string"}}}}
    },
)
def frame_file(file: str) -> Response[str]:
    """One of the page's files (its stylesheet and ES modules), by name."""
    return _serve(file)


handler: Any = lambda_entry(app)
