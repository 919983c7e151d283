"""The one place that maps errors to HTTP, the registry of the codes an answer can carry, and the one builder
of the error envelope.

Status is chosen by exception class, never by message text. Every error answer - a refused request, a
validation failure, an unexpected error, an unknown route, an unreadable body, the local gateway's and the
loopback guard's own refusals - is `{"error": {"code", "message"}}` built by `error_envelope`, with the
public details beside it when the error has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticCustomError

from workspace_memory.api.models.envelope import ErrorBody, ErrorOut
from workspace_memory.api.models.policy import PolicyOut
from workspace_memory.kernel import errors
from workspace_memory.workspaces.import_errors import WorkspaceImporting


class UnsupportedMediaType(errors.DomainError):
    """A request body declared as something other than JSON: this API reads no other format, and guessing
    (powertools would parse a form or multipart body) would let a body mean what its sender did not say."""

    code = "UNSUPPORTED_MEDIA_TYPE"


class BodyTooDeep(errors.InvalidInput):
    """A JSON body nested deeper than `api.body.MAX_DEPTH`: no request model comes close, and refusing it
    before parsing keeps the parser's recursion bounded."""

    code = "BODY_TOO_DEEP"


INTERNAL = "INTERNAL"
"""An unexpected error (a bug): the only code a 500 carries besides `DECRYPTION_FAILED`."""
ROUTE_NOT_FOUND = "ROUTE_NOT_FOUND"
HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED"
"""`workspace_memory.kernel.loopback.CODE`, spelled again: that module is standard library only (the moto server
imports it) and its http.server import is no cold start's business; tests/unit/api/test_body.py ties the two."""

PLUMBING_CODES = frozenset({INTERNAL, ROUTE_NOT_FOUND, HOST_NOT_ALLOWED})
"""The codes answered by the plumbing itself rather than by an error class."""


def registered_codes() -> frozenset[str]:
    """Every code an error answer can carry: the plumbing's and each error class's. Classes are found by
    walking `DomainError`'s subclasses, so the modules that define them must be imported (a handler imports
    its services on first use; `scripts.openapi.route_errors` imports every one for its route table)."""
    found = set(PLUMBING_CODES)
    pending: list[type[errors.DomainError]] = [errors.DomainError]
    while pending:
        cls = pending.pop()
        found.add(cls.code)
        pending.extend(cls.__subclasses__())
    return frozenset(found)


STATUS_BY_ERROR: tuple[tuple[type[errors.DomainError], int], ...] = (
    (errors.InvalidInput, 400),
    (errors.Unauthenticated, 401),
    (errors.Forbidden, 403),
    (errors.NotFound, 404),
    (errors.Conflict, 409),
    (errors.Gone, 410),
    (errors.PayloadTooLarge, 413),
    (UnsupportedMediaType, 415),
    (errors.PreconditionRequired, 428),
    (errors.RateLimited, 429),
    (errors.DecryptionFailed, 500),
    (errors.Unavailable, 503),
)


ANY_ROUTE: tuple[type[errors.DomainError], ...] = (
    errors.InvalidInput,  # parameters or body fail the route's schema, or the body is not I-JSON (api/body.py)
    BodyTooDeep,
    errors.PayloadTooLarge,  # over api/body.py's MAX_BODY_BYTES
    UnsupportedMediaType,
    errors.DecryptionFailed,  # a ciphertext that does not decrypt in its slot
    errors.Unavailable,  # the store or KMS failed: retry
    WorkspaceImporting,  # the workspace is being filled from an archive (workspaces/imports.py)
)
"""What any route can answer, whatever it does (besides `INTERNAL`, a bug): the API documents these on every
route (scripts/openapi/route_errors.py)."""


REFUSED = "refused"
"""The type of a request model's validation error that stands for a domain error (`refused`)."""


def refused(error: errors.DomainError) -> PydanticCustomError:
    """What a request model's validator raises to refuse a field as `error` (its code, status and message)
    rather than as the schema's INVALID_REQUEST. The resolver answers `error` when the request fails in no other
    way (`refusal_of`): a request that also breaks the schema elsewhere is answered as that, as before."""
    return PydanticCustomError(REFUSED, error.message, {"error": error})


def refusal_of(problems: list[dict[str, Any]]) -> errors.DomainError | None:
    """The domain error a failed validation stands for: the first refusal when every problem is one."""
    if problems and all(problem.get("type") == REFUSED for problem in problems):
        error: errors.DomainError = problems[0]["ctx"]["error"]
        return error
    return None


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
    "states",
)
"""Error details that are safe and useful to callers (ids, versions, sizes); everything else stays inside."""


def error_envelope(code: str, message: str, details: Mapping[str, object] | None = None) -> ErrorOut:
    """The envelope: the code and message, and of `details` only the public ones (mapped to their wire
    models: a policy becomes its `PolicyOut`, edit problems their `ProblemOut`)."""
    public = {name: details[name] for name in PUBLIC_DETAILS if details and name in details}
    current = public.get("current")
    if current is not None:
        from workspace_memory.document.policy import (
            Policy,  # only a stale policy revision carries one: not at cold start
        )

        if isinstance(current, Policy):
            public["current"] = PolicyOut.of(current)
    return ErrorOut.model_validate({"error": ErrorBody(code=code, message=message), **public}, from_attributes=True)


def error_of(exc: errors.DomainError) -> ErrorOut:
    return error_envelope(exc.code, exc.message, exc.details)
