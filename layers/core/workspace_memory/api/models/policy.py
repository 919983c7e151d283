"""The memory policy (`GET`/`PUT …/memory/policy`): also what a stale policy revision's error carries, so
every route's error envelope imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel
from workspace_memory.kernel.terms import Mode

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.document.policy import Policy


class PolicyOut(OutModel):
    mode: Mode
    policy_revision: int
    clear_generation: int

    @classmethod
    def of(cls, policy: Policy) -> PolicyOut:
        return cls(mode=policy.mode, policy_revision=policy.revision, clear_generation=policy.clear_generation)
