"""A person's entry request bodies: create, supersede and revert, a review decision, a search for mentions
(the agent's are in `agent_entries`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.api.schemas.entry_fields import EntryFields
from workspace_memory.kernel.ids import Identifier
from workspace_memory.kernel.terms import EntryScope


class CreateEntry(EntryFields):
    scope: EntryScope
    key: str | None = Field(default=None, max_length=300)
    agent: Identifier | None = None


class SupersedeEntry(EntryFields):
    """Scope, key and agent are the chain's: a revision changes type and text only."""

    reason: str | None = Field(default=None, max_length=1000)


class RevertEntry(ApiModel):
    """The earlier revision whose text the new revision takes."""

    revision: int = Field(ge=1)


class DecideCandidate(ApiModel):
    revision: int = Field(ge=1)


class FindMentions(ApiModel):
    """A person's name, their e-mail: what to look for (personal data: a body, never a query string)."""

    terms: list[Annotated[str, Field(min_length=3, max_length=200, pattern=r"\S")]] = Field(min_length=1, max_length=10)
