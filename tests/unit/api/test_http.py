"""The shared HTTP plumbing: error mapping by class, and nothing of an error's text leaks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import Response

from scripts.localstack.gateway import FakeContext
from tests.unit.fakes import get_event
from workspace_memory.api.errors import status_for
from workspace_memory.api.http import build_resolver, no_content
from workspace_memory.kernel import errors

pytestmark = pytest.mark.unit


CONTEXT: Any = FakeContext(function_name="unit", aws_request_id="r-1")


def test_unexpected_errors_are_500_without_their_message() -> None:
    app = build_resolver()

    @app.get("/boom")
    def boom() -> Response[str]:
        raise RuntimeError("SECRET memory text")

    @app.get("/stale")
    def stale() -> Response[str]:
        raise errors.StaleBaseVersion("base version 1 is not the current version", current_version=2)

    crashed = app.resolve(get_event("/boom"), CONTEXT)
    assert crashed["statusCode"] == 500
    assert json.loads(crashed["body"]) == {"error": {"code": "INTERNAL", "message": "internal error"}}
    assert "SECRET" not in crashed["body"]
    refused = app.resolve(get_event("/stale"), CONTEXT)
    assert refused["statusCode"] == 409
    assert json.loads(refused["body"])["currentVersion"] == 2
    assert no_content().body == ""


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.InvalidInput("x"), 400),
        (errors.Unauthenticated("x"), 401),
        (errors.AiDisabled("x"), 403),
        (errors.WorkspaceNotFound("x"), 404),
        (errors.StalePolicyRevision("x"), 409),
        (errors.PayloadTooLarge("x"), 413),
        (errors.PreconditionRequired("x"), 428),
        (errors.DecryptionFailed("x"), 500),
        (errors.Unavailable("x"), 503),
    ],
)
def test_status_is_chosen_by_class(error: errors.DomainError, status: int) -> None:
    assert status_for(error) == status


def test_a_rate_limited_write_answers_429_with_retry_after() -> None:
    app = build_resolver()

    @app.get("/busy")
    def busy() -> Response[str]:
        raise errors.RateLimited("at most 120 agent writes per hour", retry_after=1234)

    answer = app.resolve(get_event("/busy"), CONTEXT)
    assert answer["statusCode"] == 429
    assert answer["headers"]["Retry-After"] == "1234"
    body = json.loads(answer["body"])
    assert (body["error"]["code"], body["retryAfter"]) == ("RATE_LIMITED", 1234)
