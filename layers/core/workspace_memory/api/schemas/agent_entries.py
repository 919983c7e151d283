"""The agent's entry request bodies (the automation routes): a save and a verification on evidence."""

from __future__ import annotations

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.api.schemas.entry_fields import EntryFields, SourceIn
from workspace_memory.kernel.ids import Identifier
from workspace_memory.kernel.terms import MAX_EVIDENCE, EntryScope


class SaveEntry(EntryFields):
    """An agent's entry write (`save_memory`): scope `workspace` (default), `agent`, or `member` (the admission's
    user's own); a key in use supersedes its chain; a rule needs `quote`."""

    scope: EntryScope = EntryScope.WORKSPACE
    key: str | None = Field(default=None, max_length=300)
    agent: Identifier | None = None
    quote: str | None = Field(default=None, max_length=2000)


class VerifyEntry(ApiModel):
    """An agent's verification: the revision it confirms still holds, and the cited sources it read (1 to 5),
    each re-checked by the service against the text it hashed."""

    revision: int = Field(ge=1)
    evidence: list[SourceIn] = Field(min_length=1, max_length=MAX_EVIDENCE)
