"""The pages' changes (decisions/0085): a page deleted at the revision its deleter saw, an entry unfiled from
a page. Writing a page is `ReplaceRevision` (compare-and-set on its `revision`), filing two `Create`s."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store import keys
from workspace_memory.store.changes.base import Label


@dataclass(frozen=True)
class DeletePage:
    """Delete the page iff it is still at revision `expected`: a deletion never removes what its deleter did
    not see (a filing or an edit that landed meanwhile refuses it)."""

    workspace_id: str
    page_id: str
    expected: int
    label: str = Label.PAGE

    @property
    def key(self) -> keys.Key:
        return keys.page(self.workspace_id, self.page_id)


@dataclass(frozen=True)
class UnfileEntry:
    """Delete the page's side of a filing (the entry's side is a plain `Delete` beside it): unconditional, as the
    page's own compare-and-set in the same transaction says the filing is still the one read."""

    workspace_id: str
    page_id: str
    entry_id: str
    label: str = Label.FILING

    @property
    def key(self) -> keys.Key:
        return keys.page_entry(self.workspace_id, self.page_id, self.entry_id)
