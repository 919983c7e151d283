"""Filing entries in pages, a page's derived summary, and the page's compare-and-set (decisions/0085).

These are the plain methods scheduled consolidation calls with a loaded `Caller` (the routes call them too):
every one is judged against the page revision its caller read, in one transaction with the filing items, so a
filing, a summary or a deletion never lands on a page its writer did not see.

- `file(caller, page_id, entry_id, revision)`: files a live entry the caller sees (else `ENTRY_NOT_FOUND` /
  `ENTRY_FORGOTTEN`) into a page they may write; a private entry only into a private page of its own member
  (`FILING_SCOPE_MISMATCH`); an entry in another page is `ENTRY_ALREADY_FILED`; filing it where it is already
  filed changes nothing.
- `unfile(caller, page_id, entry_id, revision)`: takes it out (`ENTRY_NOT_FILED` when the page lacks it).
- `set_summary(caller, page_id, revision, text, summarized_from)`: the derived summary and the (entry id,
  revision) pairs it was made from, each an entry filed in the page.
- `unfiled_entries(caller)`: ids of the live entries the caller sees that no page holds.
- `delete_if_empty(caller, page_id, revision)`: deletes the page iff no live entry is filed in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from workspace_memory.entries.scopes import visible
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import EntryForgotten, EntryNotFound, InvalidInput, StaleRevision
from workspace_memory.kernel.terms import EntryScope, PageScope
from workspace_memory.pages import rules
from workspace_memory.pages.errors import EntryAlreadyFiled, EntryNotFiled, FilingScopeMismatch, PageFull, PageNotFound
from workspace_memory.pages.filed import filed
from workspace_memory.pages.model import MAX_PAGE_ENTRIES, SUMMARY_MAX_CHARS
from workspace_memory.store import entry_queries, keys, page_queries
from workspace_memory.store.changes import Change, Create, Delete, DeletePage, Label, ReplaceRevision, UnfileEntry
from workspace_memory.store.entry_records import EntryRecord, Tombstone, head_of
from workspace_memory.store.page_records import Filing, PageRecord
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import Caller


class PageFiling:
    def __init__(self, table: Table, clock: Clock, text: rules.PageText) -> None:
        self._table, self._clock, self._text = table, clock, text

    # -- the page's compare-and-set --------------------------------------------------------------------

    def next_revision(self, page: PageRecord, **fields: object) -> PageRecord:
        return replace(page, revision=page.revision + 1, updated_at=iso(self._clock.now()), **fields)  # type: ignore[arg-type]

    def land(self, caller: Caller, page: PageRecord, moved: PageRecord, changes: Sequence[Change]) -> None:
        """`moved` replaces `page` iff it is still at `page.revision`, with `changes` in the same transaction."""
        workspace_id = caller.workspace.id
        cas = ReplaceRevision(moved.to_item(workspace_id), page.revision, Label.PAGE)
        try:
            self._table.transact([*changes, cas])
        except TransactionCancelled as exc:
            rules.refused_access(exc)
            if Label.PAGE in exc.failed():
                seen = exc.seen(cas.key) if exc.saw(cas.key) else None
                if seen is None:
                    raise PageNotFound("page not found") from None
                current = PageRecord.from_item(seen).revision
                raise StaleRevision("the page changed concurrently", current_revision=current) from None
            if Label.FILING in exc.failed():
                raise EntryAlreadyFiled("the entry is filed in another page") from None
            raise

    def _page(self, caller: Caller, page_id: str, revision: int) -> PageRecord:
        """The page the caller may read and write, at `revision` (409 `STALE_REVISION` otherwise)."""
        page = rules.readable(page_queries.page(self._table, caller.workspace.id, page_id), caller)
        rules.write_right(caller, page.scope)
        if page.revision != revision:
            raise StaleRevision(f"revision {revision} is not the current revision", current_revision=page.revision)
        return page

    # -- filing ----------------------------------------------------------------------------------------

    def file(self, caller: Caller, page_id: str, entry_id: str, revision: int) -> PageRecord:
        workspace_id = caller.workspace.id
        page = rules.readable(page_queries.page(self._table, workspace_id, page_id), caller)
        right = rules.write_right(caller, page.scope)
        head = head_of(self._table.get(*keys.entry(workspace_id, entry_id)))
        if (
            head is None
            or not visible(head, caller)
            or (isinstance(head, EntryRecord) and head.expired(self._clock.now()))
        ):
            raise EntryNotFound("entry not found")
        if isinstance(head, Tombstone):
            raise EntryForgotten("entry was forgotten")
        if head.scope is EntryScope.MEMBER and (
            page.scope is not PageScope.PRIVATE or page.scope_owner != head.scope_owner
        ):
            raise FilingScopeMismatch("a private entry may only be filed in a private page of its own member")
        current = page_queries.filing_of(self._table, workspace_id, entry_id)
        if current is not None and current.page_id == page_id:
            return page  # filed here already: nothing to do
        if current is not None:
            raise EntryAlreadyFiled("the entry is filed in another page")
        if page.revision != revision:
            raise StaleRevision(f"revision {revision} is not the current revision", current_revision=page.revision)
        if len(page_queries.filings(self._table, workspace_id, page_id)) >= MAX_PAGE_ENTRIES:
            raise PageFull(f"a page holds at most {MAX_PAGE_ENTRIES} entries", limit=MAX_PAGE_ENTRIES)
        filing = Filing(page_id, entry_id, page.scope, page.scope_owner, iso(self._clock.now()))
        sides = [
            Create(filing.page_item(workspace_id), Label.FILING),
            Create(filing.entry_item(workspace_id), Label.FILING),
        ]
        moved = self.next_revision(page)
        self.land(caller, page, moved, [*sides, right])
        return moved

    def unfile(self, caller: Caller, page_id: str, entry_id: str, revision: int) -> PageRecord:
        workspace_id = caller.workspace.id
        page = self._page(caller, page_id, revision)
        current = page_queries.filing_of(self._table, workspace_id, entry_id)
        if current is None or current.page_id != page_id:
            raise EntryNotFiled("the page does not hold this entry")
        moved = self.next_revision(page)
        changes: list[Change] = [
            UnfileEntry(workspace_id, page_id, entry_id),
            Delete(keys.entry_filing(workspace_id, entry_id)),
            rules.write_right(caller, page.scope),
        ]
        self.land(caller, page, moved, changes)
        return moved

    # -- the derived summary ---------------------------------------------------------------------------

    def set_summary(
        self, caller: Caller, page_id: str, revision: int, text: str, summarized_from: Sequence[tuple[str, int]]
    ) -> PageRecord:
        """Consolidation's summary (sealed) and what it was made from: entries filed in the page, each once, at a
        revision they had. Notes are never touched here."""
        workspace_id = caller.workspace.id
        page = self._page(caller, page_id, revision)
        rules.text_checked(text, "summary", SUMMARY_MAX_CHARS)
        held = {f.entry_id for f in page_queries.filings(self._table, workspace_id, page_id)}
        ids = [entry_id for entry_id, _ in summarized_from]
        if len(set(ids)) != len(ids) or not set(ids) <= held or any(r < 1 for _, r in summarized_from):
            raise InvalidInput("summarizedFrom names entries filed in the page, each once, at a revision ≥ 1")
        sealed = self._text.seal(workspace_id, page_id, "summary", text)
        moved = self.next_revision(page, summary=sealed, summarized_from=tuple(sorted(summarized_from)))
        self.land(caller, page, moved, [rules.write_right(caller, page.scope)])
        return moved

    # -- what consolidation sweeps ---------------------------------------------------------------------

    def unfiled_entries(self, caller: Caller) -> list[str]:
        workspace_id, now = caller.workspace.id, self._clock.now()
        filed_ids = page_queries.entry_filings(self._table, workspace_id)
        return [
            head.entry_id
            for _, head in entry_queries.entry_heads(self._table, workspace_id)
            if isinstance(head, EntryRecord)
            and visible(head, caller)
            and not head.expired(now)
            and head.entry_id not in filed_ids
        ]

    def delete(self, caller: Caller, page: PageRecord, revision: int) -> None:
        """The page and every filing of it (live entry or not), on `revision`; the entries stay."""
        workspace_id = caller.workspace.id
        right = rules.write_right(caller, page.scope)
        if page.revision != revision:
            raise StaleRevision(f"revision {revision} is not the current revision", current_revision=page.revision)
        filings = page_queries.filings(self._table, workspace_id, page.page_id)
        sides: list[Change] = []
        for f in filings:
            sides += [
                Delete(keys.page_entry(workspace_id, f.page_id, f.entry_id)),
                Delete(keys.entry_filing(workspace_id, f.entry_id)),
            ]
        delete = DeletePage(workspace_id, page.page_id, revision)
        try:
            self._table.transact([delete, *sides, right])
        except TransactionCancelled as exc:
            rules.refused_access(exc)
            seen = exc.seen(delete.key) if exc.saw(delete.key) else None
            if seen is None:
                raise PageNotFound("page not found") from None
            raise StaleRevision(
                "the page changed concurrently", current_revision=PageRecord.from_item(seen).revision
            ) from None

    def delete_if_empty(self, caller: Caller, page_id: str, revision: int) -> bool:
        """Deletes the page iff no live entry is filed in it (filings of forgotten entries go with it)."""
        page = self._page(caller, page_id, revision)
        if filed(self._table, caller, page, self._clock.now()).live:
            return False
        self.delete(caller, page, revision)
        return True
