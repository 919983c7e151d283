"""Builders for entry tests: the draft of a fact entry."""

from __future__ import annotations

from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.kernel.terms import EntryScope, EntryType


def draft(
    title: str = "Deploys",
    summary: str = "deploy day",
    body: str = "",
    *,
    key: str | None = None,
    scope: EntryScope = EntryScope.WORKSPACE,
) -> Draft:
    """A fact's draft (a new chain's or its next revision's): the workspace's unless `scope`, no sources."""
    return Draft(EntryType.FACT, EntryText(title, summary, body, key=key), scope=scope)
