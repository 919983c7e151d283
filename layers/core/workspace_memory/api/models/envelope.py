"""The error envelope every route answers on a 4xx or 5xx."""

from __future__ import annotations

from workspace_memory.api.models.base import OutModel, omitted_when_none
from workspace_memory.api.models.policy import PolicyOut
from workspace_memory.kernel.terms import CitationState


class ErrorBody(OutModel):
    code: str
    message: str


class ProblemOut(OutModel):
    """One rejected edit: its index in the request (-1 for the request as a whole) and why."""

    index: int
    reason: str


class ErrorOut(OutModel):
    """`{"error": {code, message}}` and, when the error has them, the public details beside it (built by
    `workspace_memory.api.errors.error_envelope`, the one place that makes an envelope)."""

    error: ErrorBody
    current_version: int | None = omitted_when_none()
    current: PolicyOut | None = omitted_when_none()
    limit: int | None = omitted_when_none()
    predicate: str | None = omitted_when_none()
    problems: list[ProblemOut] | None = omitted_when_none()
    current_revision: int | None = omitted_when_none()
    retry_after: int | None = omitted_when_none()
    """Seconds until a rate-limited caller may write again (also the `Retry-After` header)."""
    states: list[CitationState] | None = omitted_when_none()
    """`EVIDENCE_NOT_CURRENT`: each cited source's state now, in the order given (`ok`, `changed`, `hidden`)."""
