"""The one place that maps domain errors to HTTP, and the one builder of the error envelope.

Status is chosen by exception class, never by message text. Every error answer - a refused request, a
validation failure, an unexpected error, an unknown route, an oversized body, the local gateway's and the
loopback guard's own refusals - is `{"error": {"code", "message"}}` built by `error_envelope`, with the
public details beside it when the error has them.
"""

from __future__ import annotations

from collections.abc import Mapping

from workspace_memory import errors
from workspace_memory.api.models import ErrorBody, ErrorOut, PolicyOut

STATUS_BY_ERROR: tuple[tuple[type[errors.DomainError], int], ...] = (
    (errors.InvalidInput, 400),
    (errors.Unauthenticated, 401),
    (errors.Forbidden, 403),
    (errors.NotFound, 404),
    (errors.Conflict, 409),
    (errors.Gone, 410),
    (errors.PayloadTooLarge, 413),
    (errors.PreconditionRequired, 428),
    (errors.RateLimited, 429),
    (errors.DecryptionFailed, 500),
    (errors.Unavailable, 503),
)


def status_for(exc: errors.DomainError) -> int:
    for cls, status in STATUS_BY_ERROR:
        if isinstance(exc, cls):
            return status
    return 500


PUBLIC_DETAILS = (
    "current_version",
    "current",
    "limit",
    "predicate",
    "problems",
    "current_revision",
    "retry_after",
)
"""Error details that are safe and useful to callers (ids, versions, sizes); everything else stays inside."""


def error_envelope(code: str, message: str, details: Mapping[str, object] | None = None) -> ErrorOut:
    """The envelope: the code and message, and of `details` only the public ones (mapped to their wire
    models: a policy becomes its `PolicyOut`, edit problems their `ProblemOut`)."""
    public = {name: details[name] for name in PUBLIC_DETAILS if details and name in details}
    current = public.get("current")
    if current is not None:
        from workspace_memory.policy import Policy  # only a stale policy revision carries one: not at cold start

        if isinstance(current, Policy):
            public["current"] = PolicyOut.of(current)
    return ErrorOut.model_validate({"error": ErrorBody(code=code, message=message), **public}, from_attributes=True)


def error_of(exc: errors.DomainError) -> ErrorOut:
    return error_envelope(exc.code, exc.message, exc.details)
