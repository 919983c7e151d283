"""A capture's edits are typed by its request model: the handler gets edit models, and every bad input is answered
as before they were (a malformed edit object INVALID_EDITS, naming no text; what is no object, no list or too
long a list INVALID_REQUEST; any other failure of the body beside a malformed edit, as that failure)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from scripts.localstack.gateway import FakeContext
from workspace_memory.api.http import build_resolver, no_content
from workspace_memory.api.schemas.turns import Capture
from workspace_memory.document.edits import MALFORMED_EDITS, AddEdit, Edit, RemoveEdit, ReplaceEdit

pytestmark = pytest.mark.unit

CONTEXT: Any = FakeContext(function_name="unit", aws_request_id="r-1")
BASE = {"admissionId": "adm_x.e30", "credential": "c", "baseVersion": 1}


def put(body: dict[str, Any]) -> tuple[int, dict[str, Any], list[list[Edit]]]:
    """The answer of a route taking a `Capture` body, and the edits its handler was given."""
    app = build_resolver()
    seen: list[list[Edit]] = []

    @app.put("/capture")
    def capture(body: Annotated[Capture, Body()]) -> Response[str]:
        seen.append(body.edits)
        return no_content()

    event = {
        "version": "2.0",
        "routeKey": "PUT /capture",
        "rawPath": "/capture",
        "rawQueryString": "",
        "headers": {"content-type": "application/json"},
        "requestContext": {"http": {"method": "PUT", "path": "/capture", "sourceIp": "127.0.0.1"}, "stage": "$default"},
        "isBase64Encoded": False,
        "body": json.dumps(body),
    }
    answer = app.resolve(event, CONTEXT)
    return answer["statusCode"], json.loads(answer["body"] or "{}"), seen


def test_the_handler_gets_edit_models() -> None:
    edits = [
        {"op": "add", "line": "- a", "heading": "## Decisions"},
        {"op": "replace", "old": "- a", "new": "- b"},
        {"op": "remove", "line": "- b"},
    ]
    status, _, seen = put({**BASE, "edits": edits})
    assert status == 204
    assert seen == [
        [AddEdit(line="- a", heading="## Decisions"), ReplaceEdit(old="- a", new="- b"), RemoveEdit(line="- b")]
    ]


@pytest.mark.parametrize(
    "edits",
    [
        [{"op": "explode", "line": "- SECRET"}],
        [{"line": "- SECRET"}],
        [{"op": "add", "line": "- SECRET", "extra": 1}],
        [{"op": "replace", "old": "- SECRET"}],
        [{"op": "remove", "line": 5}],
        [{"op": None, "line": "- SECRET"}],
        [{"op": "add", "line": "- fine"}, {"op": "add"}],
    ],
)
def test_a_malformed_edit_object_is_invalid_edits_without_its_text(edits: list[Any]) -> None:
    status, body, seen = put({**BASE, "edits": edits})
    assert (status, body) == (400, {"error": {"code": "INVALID_EDITS", "message": MALFORMED_EDITS}})
    assert seen == []


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ([1], "edits.0: Input should be a valid dictionary"),
        (["add"], "edits.0: Input should be a valid dictionary"),
        ([{"op": "explode"}, None], "edits.1: Input should be a valid dictionary"),
        ("add", "edits: Input should be a valid list"),
        ([{"op": "explode"}] * 51, "edits: List should have at most 50 items after validation, not 51"),
    ],
)
def test_what_is_no_edit_object_is_invalid_request(edits: Any, message: str) -> None:
    status, body, _ = put({**BASE, "edits": edits})
    assert (status, body) == (400, {"error": {"code": "INVALID_REQUEST", "message": message}})


def test_a_malformed_edit_beside_another_failure_is_answered_as_that_failure() -> None:
    body = {"admissionId": "adm_x.e30", "credential": "c", "edits": [{"op": "explode", "line": "- SECRET"}]}
    status, answer, _ = put(body)
    assert (status, answer) == (400, {"error": {"code": "INVALID_REQUEST", "message": "baseVersion: Field required"}})
