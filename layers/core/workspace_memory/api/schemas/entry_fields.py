"""What every entry write sends: a revision's fields and the sources it cites."""

from __future__ import annotations

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.terms import CitationKind, EntryType


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
