"""Shared HTTP plumbing for the route-group handlers: resolver, error mapping, auth, logging.

Handlers stay thin: they parse (pydantic, via the resolver's validation), call one service, and return
`respond(status, Model)`, declared `-> Response[Model]`: powertools validates the model and serializes it by
alias, and the OpenAPI document is generated from the same declarations.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, TypeVar

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from workspace_memory.api.body import MAX_BODY_BYTES, parse_json, readable
from workspace_memory.api.errors import (
    INTERNAL,
    REFUSED,
    ROUTE_NOT_FOUND,
    UnsupportedMediaType,
    error_envelope,
    error_of,
    refusal_of,
    status_for,
)
from workspace_memory.api.models.base import OutModel
from workspace_memory.api.models.envelope import ErrorOut
from workspace_memory.bootstrap import instrumented
from workspace_memory.kernel import errors, metrics

logger = Logger(service="workspace-memory")


Out = TypeVar("Out", bound=OutModel)


def respond(status: int, model: Out) -> Response[Out]:
    """A route's answer. The route declares `-> Response[Model]`; powertools' response validation checks the
    model against that declaration and serializes it by alias (fields declared `omitted_when_none` are left
    out when absent)."""
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=model)


def no_content() -> Response[str]:
    """204 with an empty body (declared `Response[str]`: powertools would serialize a `None` body as `null`)."""
    return Response(status_code=HTTPStatus.NO_CONTENT, content_type=content_types.APPLICATION_JSON, body="")


def error_response(status: int, envelope: ErrorOut, headers: dict[str, str] | None = None) -> Response[str]:
    """An error answer. Exception handlers run outside the response validation, so the envelope is serialized
    here, exactly as powertools serializes a route's model (by alias, compact)."""
    body = json.dumps(envelope.wire(), separators=(",", ":"))
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    # Never echo the offending input (it may be memory text), nor unknown keys the caller made up. A refused
    # field is left out: beside the schema's failures it says no more than it would have before it was typed.
    parts = []
    for err in [err for err in exc.errors() if err.get("type") != REFUSED][:5]:
        if err.get("type") == "extra_forbidden":
            parts.append("unknown field")
            continue
        loc = [str(p) for p in err.get("loc", ())]
        where = ".".join(loc[1:] if len(loc) > 1 else loc) or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def build_resolver() -> APIGatewayHttpResolver:
    # A route answering something other than its declared model is a bug of ours: a 500, not a 400.
    # Bodies are parsed by the API's own reader (api/body.py), which refuses what is not I-JSON.
    app = APIGatewayHttpResolver(
        enable_validation=True,
        response_validation_error_http_code=HTTPStatus.INTERNAL_SERVER_ERROR,
        json_body_deserializer=parse_json,
    )

    @app.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
    def _invalid(exc: RequestValidationError) -> Response[str]:
        refused = refusal_of(list(exc.errors()))
        if refused is not None:  # a field a request model refuses as a domain error (api/errors.py `refused`)
            return refusal(refused)
        return error_response(400, error_envelope(errors.InvalidInput.code, _validation_message(exc)))

    @app.exception_handler(RequestUnsupportedContentType)  # type: ignore[untyped-decorator]
    def _not_json(_: RequestUnsupportedContentType) -> Response[str]:
        # Only for a resolver used without `lambda_entry`, which declares every body it lets through as JSON.
        return refusal(UnsupportedMediaType("request body must be application/json"))

    @app.exception_handler(errors.DomainError)  # type: ignore[untyped-decorator]
    def _domain(exc: errors.DomainError) -> Response[str]:
        return refusal(exc)

    @app.exception_handler(Exception)  # type: ignore[untyped-decorator]
    def _unexpected(exc: Exception) -> Response[str]:
        # The type only: an exception's message could carry anything, including memory text. Said on the
        # request's one line (`lambda_entry`).
        logger.append_keys(error_type=type(exc).__name__)
        return error_response(500, error_envelope(INTERNAL, "internal error"))

    @app.not_found
    def _no_route(_: Exception) -> Response[str]:
        return error_response(404, error_envelope(ROUTE_NOT_FOUND, "no such route"))

    return app


def refusal(exc: errors.DomainError) -> Response[str]:
    """A domain error's answer: its class's status, its envelope, `Retry-After` when it has one. Its code (never
    its message) goes on the request's one log line; a 409 is counted by code (`Conflict`)."""
    status = status_for(exc)
    logger.append_keys(code=exc.code)
    if status == HTTPStatus.CONFLICT:
        metrics.count(metrics.Metric.CONFLICT, code=metrics.Code(exc.code))
    retry_after = exc.details.get("retry_after")
    headers = {"Retry-After": str(int(retry_after))} if retry_after is not None else None
    return error_response(status, error_of(exc), headers)


def human_user(app: APIGatewayHttpResolver | APIGatewayHttpRouter) -> str:
    """The JWT authorizer's `sub`; absent only if the route was deployed without the authorizer."""
    claims = app.current_event.request_context.authorizer.jwt_claim or {}
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise errors.Unauthenticated("no authenticated user")
    return sub


def refuse_unknown_parameters(app: APIGatewayHttpResolver | APIGatewayHttpRouter, allowed: frozenset[str]) -> None:
    """A query parameter the route does not declare is refused (400 `UNKNOWN_PARAMETER`), not ignored: a
    misspelt filter (`scpoe=member`) would otherwise answer an unfiltered result as if it were filtered."""
    given = app.current_event.query_string_parameters or {}
    if any(name not in allowed for name in given):
        raise errors.UnknownParameter("unknown query parameter")


def automation_caller(app: APIGatewayHttpResolver) -> str:
    """The IAM principal that signed the request (recorded for audit, never trusted for user identity)."""
    iam = app.current_event.request_context.authorizer.iam
    arn = iam.user_arn if iam else None
    if not arn:
        raise errors.Unauthenticated("automation routes need an IAM-signed request")
    return arn


def lambda_entry(
    app: APIGatewayHttpResolver, max_body_bytes: int = MAX_BODY_BYTES
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """The Lambda handler for a route group: telemetry (bootstrap.instrumented), correlation id, the body vetted
    (api/body.py), then the resolver; one log line per request, with its status (and code when refused)."""

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        path = event.get("pathParameters") or {}
        logger.append_keys(route=event.get("routeKey"), workspace_id=path.get("ws"), conversation_id=path.get("conv"))
        try:
            result: dict[str, Any] = app.resolve(readable(event, max_body_bytes), context)
        except errors.DomainError as exc:
            result = _raw(refusal(exc))
        status = result.get("statusCode")
        log = logger.error if isinstance(status, int) and status >= HTTPStatus.INTERNAL_SERVER_ERROR else logger.info
        log("request", extra={"status": status})
        return result

    return instrumented(handler)


def _raw(response: Response[str]) -> dict[str, Any]:
    return {
        "statusCode": response.status_code,
        "headers": dict(response.headers),  # Content-Type, and Retry-After when there is one
        "body": response.body,
        "isBase64Encoded": False,
    }
