"""The memory entries' request bodies: a person's create, supersede and revert, an agent's save, a review
decision, a search for mentions."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.ids import Identifier
from workspace_memory.kernel.terms import CitationKind, EntryScope, EntryType


class SourceIn(ApiModel):
    kind: CitationKind
    ref: str = Field(min_length=1, max_length=400)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    locator: str = Field(default="", max_length=800)


class EntryFields(ApiModel):
    """A revision's fields; sizes (title 120 B, summary 200 B, body 4 KiB) are the service's to check."""

    type: EntryType
    title: str = Field(max_length=1000)
    summary: str = Field(max_length=1000)
    body: str = Field(default="", max_length=16 * 1024)
    sources: list[SourceIn] = Field(default_factory=list, max_length=20)


class CreateEntry(EntryFields):
    scope: EntryScope
    key: str | None = Field(default=None, max_length=300)
    agent: Identifier | None = None


class SaveEntry(EntryFields):
    """An agent's entry write (`save_memory`): scope `workspace` (default), `agent`, or `member` (the admission's
    user's own); a key in use supersedes its chain; a rule needs `quote`."""

    scope: EntryScope = EntryScope.WORKSPACE
    key: str | None = Field(default=None, max_length=300)
    agent: Identifier | None = None
    quote: str | None = Field(default=None, max_length=2000)


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


class VerifyEntry(ApiModel):
    """An agent's verification: the revision it confirms still holds, and the cited sources it read (1 to 5),
    each re-checked by the service against the text it hashed."""

    revision: int = Field(ge=1)
    evidence: list[SourceIn] = Field(min_length=1, max_length=5)
