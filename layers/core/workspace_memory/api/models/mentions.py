"""Where stored text mentions someone: ids only, never the text nor the words asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel

if TYPE_CHECKING:
    from workspace_memory.governance.mentions import Mentions


class MentionedRevision(OutModel):
    entry_id: str
    revision: int


class MentionsOut(OutModel):
    """The document versions and entry revisions that mention any of the terms; `complete` false when the
    call stopped at its budget (`scanned`)."""

    versions: list[int]
    entries: list[MentionedRevision]
    scanned: int
    complete: bool

    @classmethod
    def of(cls, found: Mentions) -> MentionsOut:
        return cls(
            versions=list(found.versions),
            entries=[MentionedRevision(entry_id=e, revision=r) for e, r in found.entries],
            scanned=found.scanned,
            complete=found.complete,
        )
