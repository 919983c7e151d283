"""The API's own description (no auth, no data): the OpenAPI document and Swagger UI.

The document is functions/docs/openapi.json, generated from the route groups' typed handlers by
`make openapi` (scripts/openapi/) and checked in `make test`; this function only serves it. Swagger UI is
powertools' page with the Swagger UI assets powertools ships inlined: nothing is loaded from a CDN.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types

from workspace_memory.api.http import build_resolver, lambda_entry
from workspace_memory.api.page_headers import inline_page_policy, page_headers

DOCUMENT = Path(__file__).with_name("openapi.json")

app = build_resolver()


@cache
def _document_text() -> str:
    return DOCUMENT.read_text(encoding="utf-8")


@cache
def _swagger_page() -> str:
    # Imported here: the page generator pulls in powertools' OpenAPI models (a third of this function's cold
    # import), which only this page needs; the document route does not.
    from aws_lambda_powertools.event_handler.openapi import swagger_ui as swagger_assets
    from aws_lambda_powertools.event_handler.openapi.swagger_ui import generate_swagger_html

    # Powertools ships the Swagger UI bundle and stylesheet beside its page generator.
    assets = Path(swagger_assets.__file__).parent
    js = (assets / "swagger-ui-bundle.min.js").read_text(encoding="utf-8")
    css = (assets / "swagger-ui.min.css").read_text(encoding="utf-8")
    # `</` escaped so the inlined document cannot close the page's <script> (as powertools does).
    spec = _document_text().replace("</", "<\\/")
    page = generate_swagger_html(spec, js, css, swagger_base_url="", oauth2_config=None)
    # Powertools' page points its "download" link at `<page>?format=json`; this API serves it elsewhere.
    return page.replace('currentUrl.pathname + "?format=json"', '"/v1/openapi.json"')


@app.get(
    "/v1/openapi.json",
    summary="This API's OpenAPI document",
    description=("The OpenAPI 3.1 document of every route, generated from the handlers. No authentication."),
)
def openapi_document() -> Response[dict[str, Any]]:
    """This API's OpenAPI 3.1 document."""
    document: dict[str, Any] = json.loads(_document_text())
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=document)


@app.get(
    "/v1/docs",
    summary="Swagger UI for this API",
    description=(
        "An interactive page over the OpenAPI document, its assets inlined (nothing loaded from elsewhere). No "
        "authentication."
    ),
    responses={200: {"description": "Swagger UI", "content": {"text/html": {"schema": {"type": "string"}}}}},
)
def swagger_ui() -> Response[str]:
    """Swagger UI for this API's document, its assets inlined (no CDN), with the frame's security headers: its
    inline script and stylesheet are allowed by hash, nothing else runs."""
    page = _swagger_page()
    headers = page_headers(_swagger_policy())
    return Response(status_code=200, content_type="text/html; charset=utf-8", body=page, headers=headers)


@cache
def _swagger_policy() -> str:
    return inline_page_policy(_swagger_page())


handler: Any = lambda_entry(app)
