"""The one reader of request bodies (api/body.py): what it accepts, what it refuses with which code, and that a
refusal answers before any handler runs. These bodies were 500s before it (deep nesting, text/plain, XML,
`Application/JSON`, a `+json` type, multipart without a boundary, an integer of 5,000 digits)."""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any

import pytest
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body
from hypothesis import given, settings
from hypothesis import strategies as st

from scripts.localstack.gateway import FakeContext
from scripts.localstack.template import ROOT
from tests.depth import examples
from workspace_memory.api.body import (
    MAX_BODY_BYTES,
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    check_media_type,
    nested_deeper_than,
    parse_json,
    readable,
)
from workspace_memory.api.errors import BodyTooDeep, UnsupportedMediaType, registered_codes
from workspace_memory.api.http import build_resolver, lambda_entry, respond
from workspace_memory.api.models.document import RetentionOut
from workspace_memory.api.schemas.document import SetPolicy
from workspace_memory.document.versions import MAX_DOCUMENT_BYTES
from workspace_memory.kernel import errors, loopback

pytestmark = pytest.mark.unit

CONTEXT: Any = FakeContext(function_name="unit", aws_request_id="r-1")
POLICY = '{"mode": "auto", "expectedRevision": 0}'


def nested(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "",
        "application/json",
        "Application/JSON; charset=UTF-8",
        'application/json;charset="utf-8"',
        "application/json; charset=utf8; q=1",
        "application/merge-patch+json",
        "application/vnd.api+json",
    ],
)
def test_json_media_types_are_read(content_type: str | None) -> None:
    check_media_type(content_type)


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/xml",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin-1",
        "application/json, text/plain",
        "application/jsonx",
        "application/+json",
        "application/\u00e9+json",
        "text/json",
        "json",
    ],
)
def test_other_media_types_are_415(content_type: str) -> None:
    with pytest.raises(UnsupportedMediaType):
        check_media_type(content_type)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (nested(10_000), BodyTooDeep),
        ('{"a":' * 10_000 + "1" + "}" * 10_000, BodyTooDeep),
        (nested(MAX_DEPTH + 1), BodyTooDeep),
        ("[" * 10_000, BodyTooDeep),  # truncated, and still open that deep
        ('{"content": ', errors.InvalidInput),
        ('{"a": 1} x', errors.InvalidInput),
        ("  ", errors.InvalidInput),
        ('{"mode": "auto", "mode": "off"}', errors.InvalidInput),
        ('[{"a": 1, "a": 1}]', errors.InvalidInput),
        ('{"n": NaN}', errors.InvalidInput),
        ('{"n": Infinity}', errors.InvalidInput),
        ('{"n": -Infinity}', errors.InvalidInput),
        ('{"n": 1e999}', errors.InvalidInput),
        ('{"n": ' + "9" * 5000 + "}", errors.InvalidInput),
        (f'{{"n": {MAX_SAFE_INTEGER + 1}}}', errors.InvalidInput),
        (f'{{"n": {-MAX_SAFE_INTEGER - 1}}}', errors.InvalidInput),
        ('{"content": "a \\ud800 b"}', errors.InvalidInput),
        ('{"\\udfff": 1}', errors.InvalidInput),
        ('["\\ude00\\ud83d"]', errors.InvalidInput),  # a pair in the wrong order is two lone halves
    ],
)
def test_what_is_not_ijson_within_the_depth_is_refused(text: str, error: type[errors.DomainError]) -> None:
    with pytest.raises(error) as refused:
        parse_json(text)
    assert type(refused.value) is error
    assert "auto" not in refused.value.message  # never the input
    assert "9999" not in refused.value.message


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (nested(MAX_DEPTH), json.loads(nested(MAX_DEPTH))),
        ('["\\ud83d\\ude00"]', ["\U0001f600"]),  # a pair is one character
        ('["\\\\ud800"]', ["\\ud800"]),  # an escaped backslash, then text
        ('["[[[[", "\\"]]"]', ["[[[[", '"]]']),  # brackets inside strings do not nest
        (f"[{MAX_SAFE_INTEGER}, {-MAX_SAFE_INTEGER}, 1e308, -0.5]", [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 1e308, -0.5]),
    ],
)
def test_ijson_within_the_depth_is_read(text: str, value: Any) -> None:
    assert parse_json(text) == value


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text('[]{}"\\ab', max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text('[]{}"\\ab', max_size=3), inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=examples(300), deadline=None)
@given(value=json_values, limit=st.integers(0, 6))
def test_the_depth_scan_agrees_with_the_parsed_depth(value: Any, limit: int) -> None:
    assert nested_deeper_than(json.dumps(value), limit) == (depth(value) > limit)


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text('[]{}"\\a:, ', max_size=60))
def test_what_the_depth_scan_passes_parses_without_deep_recursion(text: str) -> None:
    if nested_deeper_than(text, 3):
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return
    assert depth(value) <= 3


def test_the_cap_counts_bytes_and_admits_the_largest_document_in_any_spelling() -> None:
    escaped = json.dumps({"content": "\x01" * MAX_DOCUMENT_BYTES})  # every byte a six-byte \u0001
    assert len(escaped) > 6 * MAX_DOCUMENT_BYTES
    assert readable(event(escaped))["body"] == escaped
    two_byte = '"' + "\u00e9" * (MAX_BODY_BYTES // 2) + '"'  # under the cap in characters, over it in bytes
    with pytest.raises(errors.PayloadTooLarge) as refused:
        readable(event(two_byte))
    assert refused.value.details == {"limit": MAX_BODY_BYTES}
    with pytest.raises(errors.PayloadTooLarge):
        readable(event(base64.b64encode(b" " * (MAX_BODY_BYTES + 1)).decode(), encoded=True))


def test_a_readable_body_reaches_the_resolver_as_declared_json_text() -> None:
    given_event = event(base64.b64encode(POLICY.encode()).decode(), "Application/JSON; charset=UTF-8", encoded=True)
    vetted = readable(given_event)
    assert (vetted["body"], vetted["isBase64Encoded"]) == (POLICY, False)
    assert vetted["headers"] == {"content-type": "application/json", "x-other": "kept"}
    assert readable(event("")) == event("")


def event(body: str, content_type: str | None = "application/json", *, encoded: bool = False) -> dict[str, Any]:
    headers = {"x-other": "kept"} | ({"Content-Type": content_type} if content_type is not None else {})
    return {
        "version": "2.0",
        "routeKey": "PUT /policy",
        "rawPath": "/policy",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "http": {"method": "PUT", "path": "/policy", "sourceIp": "127.0.0.1"},
            "requestId": "r",
            "stage": "$default",
        },
        "isBase64Encoded": encoded,
        "body": body,
    }


def policy_handler() -> tuple[Any, list[SetPolicy]]:
    """A route group of one body route, through `lambda_entry`, recording what its handler was given."""
    app = build_resolver()
    seen: list[SetPolicy] = []

    @app.put("/policy")
    def put_policy(body: Annotated[SetPolicy, Body()]) -> Response[RetentionOut]:
        seen.append(body)
        return respond(200, RetentionOut(history_days=1, agent_days=1))

    return lambda_entry(app), seen


@pytest.mark.parametrize(
    ("body", "content_type", "encoded", "status", "code"),
    [
        (nested(10_000), "application/json", False, 400, "BODY_TOO_DEEP"),
        (POLICY, "text/plain", False, 415, "UNSUPPORTED_MEDIA_TYPE"),
        ("<policy/>", "application/xml", False, 415, "UNSUPPORTED_MEDIA_TYPE"),
        ("mode=auto", "application/x-www-form-urlencoded", False, 415, "UNSUPPORTED_MEDIA_TYPE"),
        ("x", "multipart/form-data", False, 415, "UNSUPPORTED_MEDIA_TYPE"),
        (base64.b64encode(b"\xff\xfe{").decode(), "application/json", True, 400, "INVALID_REQUEST"),
        ('{"mode": "auto", "expectedRevision": ' + "9" * 5000 + "}", "application/json", False, 400, "INVALID_REQUEST"),
        ('{"mode": "auto", "mode": "off", "expectedRevision": 0}', None, False, 400, "INVALID_REQUEST"),
        (" " * (MAX_BODY_BYTES + 1), "application/json", False, 413, "PAYLOAD_TOO_LARGE"),
        ("[]", "application/json", False, 400, "INVALID_REQUEST"),
    ],
)
def test_an_unreadable_body_is_refused_before_the_handler(
    body: str, content_type: str | None, encoded: bool, status: int, code: str
) -> None:
    handler, seen = policy_handler()
    answer = handler(event(body, content_type, encoded=encoded), CONTEXT)
    assert (answer["statusCode"], json.loads(answer["body"])["error"]["code"]) == (status, code)
    assert answer["headers"]["Content-Type"] == "application/json"
    assert seen == []


@pytest.mark.parametrize("content_type", [None, "application/JSON", "application/merge-patch+json"])
def test_a_readable_body_reaches_the_handler(content_type: str | None) -> None:
    handler, seen = policy_handler()
    answer = handler(event(POLICY, content_type), CONTEXT)
    assert answer["statusCode"] == 200, answer["body"]
    assert [(p.mode.value, p.expected_revision) for p in seen] == [("auto", 0)]


def test_the_resolver_alone_refuses_what_powertools_cannot_read() -> None:
    """Without `lambda_entry` (a unit test's resolver): powertools' own unsupported type is 415, not a 500."""
    app = build_resolver()

    @app.put("/policy")
    def put_policy(body: Annotated[SetPolicy, Body()]) -> Response[RetentionOut]:
        return respond(200, RetentionOut(history_days=body.expected_revision, agent_days=1))

    answer = app.resolve(event(POLICY, "text/plain"), CONTEXT)
    assert (answer["statusCode"], json.loads(answer["body"])["error"]["code"]) == (415, "UNSUPPORTED_MEDIA_TYPE")
    deep = app.resolve(event(nested(5_000)), CONTEXT)
    assert (deep["statusCode"], json.loads(deep["body"])["error"]["code"]) == (400, "BODY_TOO_DEEP")


def test_the_registry_holds_the_new_codes_and_the_loopback_guards() -> None:
    codes = registered_codes()
    assert {"UNSUPPORTED_MEDIA_TYPE", "BODY_TOO_DEEP", "INVALID_REQUEST", "PAYLOAD_TOO_LARGE"} <= codes
    assert loopback.CODE in codes


def test_no_request_model_comes_near_the_depth_limit() -> None:
    """Every route's request schema (the served OpenAPI document) nests far less than `MAX_DEPTH`: a model that
    grows deeper must revisit the limit. A free-form value (`dict[str, Any]`) counts one level more."""
    document = json.loads((ROOT / "functions" / "docs" / "openapi.json").read_text(encoding="utf-8"))
    schemas = document["components"]["schemas"]

    def levels(schema: dict[str, Any], seen: frozenset[str] = frozenset()) -> int:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            assert name not in seen, f"{name} is recursive: no depth bound"
            return levels(schemas[name], seen | {name})
        found = max((levels(s, seen) for key in ("anyOf", "oneOf", "allOf") for s in schema.get(key, [])), default=0)
        if schema.get("type") == "array":
            found = max(found, 1 + levels(schema.get("items", {}), seen))
        if schema.get("type") == "object":
            extra = schema.get("additionalProperties")
            inner = [levels(s, seen) for s in schema.get("properties", {}).values()]
            inner += [levels(extra, seen) if isinstance(extra, dict) else 1] if extra is not False else []
            found = max(found, 1 + max(inner, default=0))
        return found

    bodies = [
        operation["requestBody"]["content"]["application/json"]["schema"]
        for methods in document["paths"].values()
        for operation in methods.values()
        if "requestBody" in operation
    ]
    assert len(bodies) >= 20
    assert max(levels(schema) for schema in bodies) <= MAX_DEPTH // 4
