"""Page items as the pages context reads and writes them (docs/data-model.md, decisions/0085): a page
(`PAGE#{id}`), each filing twice (`PAGEENTRY#{pageId}#{entryId}`, the page's entries; `FILED#{entryId}`, the
entry's page: one per entry, so an entry is filed in at most one page), and the workspace's extra categories
(`PAGECATEGORIES`). Title, notes and summary are sealed bytes; nothing here is text a person wrote."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.kernel.terms import PageScope
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import optional_bytes, present


@dataclass(frozen=True)
class PageRecord:
    """A page at one revision: every change to it (an edit, a filing, its summary) is the next revision."""

    page_id: str
    revision: int
    scope: PageScope
    scope_owner: str
    category: str
    title: bytes
    created_at: str
    updated_at: str
    notes: bytes | None = None
    summary: bytes | None = None
    summarized_from: tuple[tuple[str, int], ...] = ()
    """The (entry id, revision) pairs the summary was made from: ids only, never text."""

    @classmethod
    def of(cls, item: Item | None) -> PageRecord | None:
        return None if item is None else cls.from_item(item)

    @classmethod
    def from_item(cls, item: Item) -> PageRecord:
        return cls(
            page_id=item["pageId"],
            revision=int(item["revision"]),
            scope=PageScope(item["scope"]),
            scope_owner=item["scopeOwner"],
            category=item["category"],
            title=bytes(item["titleCiphertext"]),
            created_at=item["createdAt"],
            updated_at=item["updatedAt"],
            notes=optional_bytes(item.get("notesCiphertext")),
            summary=optional_bytes(item.get("summaryCiphertext")),
            summarized_from=tuple((str(s["entryId"]), int(s["revision"])) for s in item.get("summarizedFrom", ())),
        )

    def to_item(self, workspace_id: str) -> Item:
        sources = [{"entryId": entry_id, "revision": revision} for entry_id, revision in self.summarized_from]
        return {
            **keys.as_key(keys.page(workspace_id, self.page_id)),
            **present(
                {
                    "pageId": self.page_id,
                    "revision": self.revision,
                    "scope": self.scope.value,
                    "scopeOwner": self.scope_owner,
                    "category": self.category,
                    "titleCiphertext": self.title,
                    "notesCiphertext": self.notes,
                    "summaryCiphertext": self.summary,
                    "summarizedFrom": sources or None,
                    "createdAt": self.created_at,
                    "updatedAt": self.updated_at,
                }
            ),
        }


@dataclass(frozen=True)
class Filing:
    """An entry filed in a page; both of its items carry the page's scope and owner, so a member's erasure
    deletes the filings of their private pages with the pages."""

    page_id: str
    entry_id: str
    scope: PageScope
    scope_owner: str
    filed_at: str

    @classmethod
    def of(cls, item: Item | None) -> Filing | None:
        if item is None:
            return None
        scope = PageScope(item["scope"])
        return cls(item["pageId"], item["entryId"], scope, item["scopeOwner"], item["filedAt"])

    def _attributes(self) -> Item:
        return {
            "pageId": self.page_id,
            "entryId": self.entry_id,
            "scope": self.scope.value,
            "scopeOwner": self.scope_owner,
            "filedAt": self.filed_at,
        }

    def page_item(self, workspace_id: str) -> Item:
        """The page's side: what lists a page's entries."""
        return {**keys.as_key(keys.page_entry(workspace_id, self.page_id, self.entry_id)), **self._attributes()}

    def entry_item(self, workspace_id: str) -> Item:
        """The entry's side: which page holds the entry (its key is the entry's: one page at a time)."""
        return {**keys.as_key(keys.entry_filing(workspace_id, self.entry_id)), **self._attributes()}


@dataclass(frozen=True)
class CategoriesRecord:
    """The categories the owner added (revision 0 and none: never set)."""

    revision: int
    categories: tuple[str, ...]
    updated_at: str | None = None

    @classmethod
    def of(cls, item: Item | None) -> CategoriesRecord:
        if item is None:
            return cls(0, ())
        return cls(int(item["revision"]), tuple(item.get("categories", ())), item.get("updatedAt"))

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.page_categories(workspace_id)),
            "revision": self.revision,
            "updatedAt": self.updated_at,
            **present({"categories": list(self.categories) or None}),
        }
