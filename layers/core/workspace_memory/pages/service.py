"""Pages (docs/architecture.md#pages, decisions/0085): a page groups entries about one subject, PrimeThink-style.

A page item (`PAGE#{id}`) carries its scope, owner, category and revision in clear and its title, notes and
summary sealed; every change is a compare-and-set on `revision`. Filing is two items of their own (the page's
entries; the entry's page, one per entry), written in the same transaction as the page's next revision, so an
entry is in at most one page and every filing change is judged against the page its writer saw. A summary's
staleness is computed on every read from what it was made from and the entries' current heads: no entry write
knows pages exist.

`PageService` is the context's one entry point: the routes call the `user_id` methods; consolidation calls
the plain ones that take a loaded `Caller` (`file`, `unfile`, `set_summary`, `unfiled_entries`,
`delete_if_empty`), each documented where it is defined (`pages/filing.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from workspace_memory.entries.model import EntryText, entry_context
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import StaleRevision
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import PageScope
from workspace_memory.pages import rules
from workspace_memory.pages.filed import filed
from workspace_memory.pages.filing import PageFiling
from workspace_memory.pages.model import (
    NOTES_MAX_CHARS,
    TITLE_MAX_CHARS,
    Categories,
    PageChanges,
    PageEntryRow,
    PageLine,
    PageList,
    PageView,
)
from workspace_memory.store import keys, page_queries
from workspace_memory.store.changes import Create, Label, ReplaceRevision
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.store.page_records import CategoriesRecord, PageRecord
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller, load_caller


class PageService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table, self._cipher, self._clock = table, cipher, clock
        self._text = rules.PageText(cipher)
        self.filing = PageFiling(table, clock, self._text)
        """The plain methods consolidation calls (file, unfile, set_summary, unfiled_entries, delete_if_empty)."""

    def caller(self, user_id: str, workspace_id: str) -> Caller:
        caller, _ = load_caller(self._table, workspace_id, user_id)
        return caller

    # -- categories ------------------------------------------------------------------------------------

    def categories(self, workspace_id: str) -> Categories:
        record = page_queries.categories(self._table, workspace_id)
        return Categories(record.categories, record.revision)

    def set_categories(self, user_id: str, workspace_id: str, extra: Sequence[str], revision: int) -> Categories:
        """The owner's extra categories, by compare-and-set on their `revision` (0: never set). A category
        taken off the list stays on the pages that have it; new writes may no longer choose it."""
        caller = self.caller(user_id, workspace_id)
        caller.require_owner()
        checked = rules.categories_checked(extra)
        record = CategoriesRecord(revision + 1, checked, iso(self._clock.now()))
        change = ReplaceRevision(record.to_item(workspace_id), revision, Label.PAGE_CATEGORIES)
        try:
            self._table.transact([change, caller.still_owner()])
        except TransactionCancelled as exc:
            rules.refused_access(exc)
            current = self.categories(workspace_id).revision
            raise StaleRevision("the categories changed", current_revision=current) from None
        return Categories(checked, revision + 1)

    # -- pages -----------------------------------------------------------------------------------------

    def create(
        self, user_id: str, workspace_id: str, scope: PageScope, category: str, title: str, notes: str | None
    ) -> PageRecord:
        caller = self.caller(user_id, workspace_id)
        right = rules.write_right(caller, scope)
        rules.category_checked(category, self.categories(workspace_id).all)
        rules.text_checked(title, "title", TITLE_MAX_CHARS)
        page_id, now = new_id("pg"), iso(self._clock.now())
        sealed_notes = None
        if notes:
            rules.text_checked(notes, "notes", NOTES_MAX_CHARS, empty=True)
            sealed_notes = self._text.seal(workspace_id, page_id, "notes", notes)
        page = PageRecord(
            page_id,
            1,
            scope,
            rules.owner_of(caller, scope),
            category,
            self._text.seal(workspace_id, page_id, "title", title),
            now,
            now,
            notes=sealed_notes,
        )
        try:
            self._table.transact([Create(page.to_item(workspace_id), Label.PAGE), right])
        except TransactionCancelled as exc:
            rules.refused_access(exc)
            raise
        return page

    def read(self, user_id: str, workspace_id: str, page_id: str) -> PageView:
        """The page with its live entries (id, revision, title, summary) and whether its summary is stale."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.page(workspace_id, page_id)])
        page = rules.readable(PageRecord.of(item), caller)
        held = filed(self._table, caller, page, self._clock.now())
        rows = []
        for head in held.live:
            text = EntryText.parse(
                unseal(self._cipher, head.ciphertext, entry_context(workspace_id, head.entry_id, head.revision))
            )
            rows.append(PageEntryRow(head.entry_id, head.revision, text.title, text.summary))
        open_ = self._text.maybe
        return PageView(
            page_id=page.page_id,
            revision=page.revision,
            scope=page.scope,
            owner=page.scope_owner if page.scope is PageScope.PRIVATE else None,
            category=page.category,
            title=self._text.open(workspace_id, page_id, "title", page.title),
            notes=open_(workspace_id, page_id, "notes", page.notes),
            summary=open_(workspace_id, page_id, "summary", page.summary),
            summarized_from=page.summarized_from,
            summary_stale=held.stale(page),
            entries=tuple(rows),
            created_at=page.created_at,
            updated_at=page.updated_at,
        )

    def list_pages(
        self, user_id: str, workspace_id: str, category: str | None, limit: int, cursor: str | None
    ) -> PageList:
        """The pages the caller may read, of `category` when given, in id order, `limit` at a time."""
        caller = self.caller(user_id, workspace_id)
        after = None if cursor is None else decode_cursor(cursor, keys.PAGE_PREFIX)
        lines: list[PageLine] = []
        next_cursor = None
        now = self._clock.now()
        found = page_queries.pages(self._table, workspace_id, after=after)
        for position, page in found:
            if category is not None and page.category != category:
                continue
            if page.scope is PageScope.PRIVATE and page.scope_owner != caller.user_id:
                continue
            held = filed(self._table, caller, page, now)
            title = self._text.open(workspace_id, page.page_id, "title", page.title)
            line = PageLine(
                page.page_id, page.revision, page.scope, page.category, title, held.stale(page), len(held.live)
            )
            lines.append(line)
            if len(lines) == limit:
                next_cursor = encode_cursor(position) if next(found, None) is not None else None
                break
        return PageList(lines, next_cursor, self.categories(workspace_id).all)

    def update(self, user_id: str, workspace_id: str, page_id: str, revision: int, changes: PageChanges) -> PageRecord:
        """A person's edit of title, category or notes, on `revision` (409 `STALE_REVISION` otherwise). Only
        this route writes notes: consolidation never touches them."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.page(workspace_id, page_id)])
        page = rules.readable(PageRecord.of(item), caller)
        right = rules.write_right(caller, page.scope)
        if changes.category is not None and changes.category != page.category:  # its own is kept, listed or not
            rules.category_checked(changes.category, self.categories(workspace_id).all)
        title, notes = page.title, page.notes
        if changes.title is not None:
            rules.text_checked(changes.title, "title", TITLE_MAX_CHARS)
            title = self._text.seal(workspace_id, page_id, "title", changes.title)
        if changes.notes is not None:
            rules.text_checked(changes.notes, "notes", NOTES_MAX_CHARS, empty=True)
            notes = self._text.seal(workspace_id, page_id, "notes", changes.notes) if changes.notes else None
        if page.revision != revision:
            raise StaleRevision(f"revision {revision} is not the current revision", current_revision=page.revision)
        category = page.category if changes.category is None else changes.category
        moved = self.filing.next_revision(page, title=title, notes=notes, category=category)
        self.filing.land(caller, page, moved, [right])
        return moved

    def delete(self, user_id: str, workspace_id: str, page_id: str, revision: int) -> None:
        """The page and its filings, on `revision`; the entries stay, unfiled."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.page(workspace_id, page_id)])
        page = rules.readable(PageRecord.of(item), caller)
        self.filing.delete(caller, page, revision)
