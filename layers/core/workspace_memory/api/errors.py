"""The one place that maps domain errors to HTTP. Chosen by exception class, never by message text."""

from __future__ import annotations

from workspace_memory import errors

STATUS_BY_ERROR: tuple[tuple[type[errors.DomainError], int], ...] = (
    (errors.InvalidInput, 400),
    (errors.Unauthenticated, 401),
    (errors.Forbidden, 403),
    (errors.NotFound, 404),
    (errors.Conflict, 409),
    (errors.PayloadTooLarge, 413),
    (errors.PreconditionRequired, 428),
    (errors.DecryptionFailed, 500),
    (errors.Unavailable, 503),
)


def status_for(exc: errors.DomainError) -> int:
    for cls, status in STATUS_BY_ERROR:
        if isinstance(exc, cls):
            return status
    return 500


PUBLIC_DETAILS = ("current_version", "current", "limit", "predicate", "problems", "current_revision")
"""Error details that are safe and useful to callers (ids, versions, sizes); everything else stays inside."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def error_body(exc: errors.DomainError) -> dict[str, object]:
    body: dict[str, object] = {"code": exc.code, "message": exc.message}
    payload: dict[str, object] = {"error": body}
    for name in PUBLIC_DETAILS:
        if name in exc.details:
            payload[_camel(name)] = exc.details[name]
    return payload
