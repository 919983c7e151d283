"""A person's page request bodies (docs/architecture.md#pages): create, edit, file, the owner's categories."""

from __future__ import annotations

from pydantic import Field

from workspace_memory.api.models.base import ApiModel
from workspace_memory.kernel.terms import PageScope
from workspace_memory.pages.model import NOTES_MAX_CHARS, TITLE_MAX_CHARS

_CATEGORY = Field(min_length=1, max_length=32)


class CreatePage(ApiModel):
    scope: PageScope = PageScope.WORKSPACE
    category: str = _CATEGORY
    title: str = Field(min_length=1, max_length=TITLE_MAX_CHARS)
    notes: str | None = Field(default=None, max_length=NOTES_MAX_CHARS)


class UpdatePage(ApiModel):
    """What is left out stays as it is; `notes: ""` removes the notes."""

    revision: int = Field(ge=1)
    title: str | None = Field(default=None, min_length=1, max_length=TITLE_MAX_CHARS)
    category: str | None = Field(default=None, min_length=1, max_length=32)
    notes: str | None = Field(default=None, max_length=NOTES_MAX_CHARS)


class FileEntry(ApiModel):
    revision: int = Field(ge=1)


class SetPageCategories(ApiModel):
    categories: list[str] = Field(max_length=100)
    revision: int = Field(ge=0)
