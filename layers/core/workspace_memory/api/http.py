"""Shared HTTP plumbing for the route-group handlers: resolver, error mapping, auth, logging.

Handlers stay thin: they parse (pydantic, via the resolver's validation), call one service, and return
`respond(status, Model)`, declared `-> Response[Model]`: powertools validates the model and serializes it by
alias, and the OpenAPI document is generated from the same declarations.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, TypeVar

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from workspace_memory import errors
from workspace_memory.api.errors import error_envelope, error_of, status_for
from workspace_memory.api.models import ErrorOut, OutModel

logger = Logger(service="workspace-memory")

MAX_BODY_BYTES = 256 * 1024
"""Requests above this are refused before parsing; documents have their own, smaller cap (413 too)."""


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
    # Never echo the offending input (it may be memory text), nor unknown keys the caller made up.
    parts = []
    for err in exc.errors()[:5]:
        if err.get("type") == "extra_forbidden":
            parts.append("unknown field")
            continue
        loc = [str(p) for p in err.get("loc", ())]
        where = ".".join(loc[1:] if len(loc) > 1 else loc) or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def build_resolver() -> APIGatewayHttpResolver:
    # A route answering something other than its declared model is a bug of ours: a 500, not a 400.
    app = APIGatewayHttpResolver(
        enable_validation=True, response_validation_error_http_code=HTTPStatus.INTERNAL_SERVER_ERROR
    )

    @app.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
    def _invalid(exc: RequestValidationError) -> Response[str]:
        return error_response(400, error_envelope("INVALID_REQUEST", _validation_message(exc)))

    @app.exception_handler(errors.DomainError)  # type: ignore[untyped-decorator]
    def _domain(exc: errors.DomainError) -> Response[str]:
        status = status_for(exc)
        logger.info("request refused", extra={"code": exc.code, "status": status})
        retry_after = exc.details.get("retry_after")
        headers = {"Retry-After": str(int(retry_after))} if retry_after is not None else None
        return error_response(status, error_of(exc), headers)

    @app.exception_handler(Exception)  # type: ignore[untyped-decorator]
    def _unexpected(exc: Exception) -> Response[str]:
        # The type only: an exception's message could carry anything, including memory text.
        logger.error("unhandled error", extra={"error_type": type(exc).__name__})
        return error_response(500, error_envelope("INTERNAL", "internal error"))

    @app.not_found
    def _no_route(_: Exception) -> Response[str]:
        return error_response(404, error_envelope("ROUTE_NOT_FOUND", "no such route"))

    return app


def human_user(app: APIGatewayHttpResolver) -> str:
    """The JWT authorizer's `sub`; absent only if the route was deployed without the authorizer."""
    claims = app.current_event.request_context.authorizer.jwt_claim or {}
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise errors.Unauthenticated("no authenticated user")
    return sub


def only_query_params(app: APIGatewayHttpResolver, *names: str) -> None:
    """Refuse a query parameter the route does not take (a stable 400, never echoing it): an unknown filter is
    a caller's mistake that would otherwise be ignored silently."""
    given = app.current_event.query_string_parameters or {}
    if any(name not in names for name in given):
        raise errors.InvalidInput(f"unknown query parameter; this route takes {', '.join(names)}")


def automation_caller(app: APIGatewayHttpResolver) -> str:
    """The IAM principal that signed the request (recorded for audit, never trusted for user identity)."""
    iam = app.current_event.request_context.authorizer.iam
    arn = iam.user_arn if iam else None
    if not arn:
        raise errors.Unauthenticated("automation routes need an IAM-signed request")
    return arn


def lambda_entry(app: APIGatewayHttpResolver) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """The Lambda handler for a route group: body cap, correlation id, then the resolver."""

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        body = event.get("body") or ""
        if len(body) > MAX_BODY_BYTES * (4 / 3 if event.get("isBase64Encoded") else 1):
            refusal = error_envelope("PAYLOAD_TOO_LARGE", f"request body over {MAX_BODY_BYTES} bytes")
            return _raw(error_response(413, refusal))
        if _not_text(event):
            refusal = error_envelope("INVALID_REQUEST", "request body must be UTF-8 JSON")
            return _raw(error_response(400, refusal))
        path = event.get("pathParameters") or {}
        logger.append_keys(route=event.get("routeKey"), workspace_id=path.get("ws"), conversation_id=path.get("conv"))
        result: dict[str, Any] = app.resolve(event, context)
        logger.info("request", extra={"status": result.get("statusCode")})
        return result

    return handler


def _not_text(event: dict[str, Any]) -> bool:
    """A body API Gateway handed over base64-encoded that is not UTF-8: no route of this API takes one, and
    the resolver would fail decoding it (a 500) before validation could refuse it."""
    if not event.get("isBase64Encoded") or not event.get("body"):
        return False
    try:
        base64.b64decode(event["body"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return True
    return False


def _raw(response: Response[str]) -> dict[str, Any]:
    return {
        "statusCode": response.status_code,
        "headers": {"Content-Type": "application/json"},
        "body": response.body,
        "isBase64Encoded": False,
    }
