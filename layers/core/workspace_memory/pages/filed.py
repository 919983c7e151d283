"""What a page holds now: the live entries filed in it, as their heads say (forgotten ones, agent memories
past their window and anything the caller may not see drop out), and whether its summary is stale."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.entries.scopes import visible
from workspace_memory.pages.model import summary_stale
from workspace_memory.store import page_queries
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.page_records import Filing, PageRecord
from workspace_memory.store.ports import Table
from workspace_memory.workspaces.access import Caller


@dataclass(frozen=True)
class Filed:
    filings: list[Filing]
    """Every filing of the page, live entry or not (what its deletion removes)."""
    live: list[EntryRecord]
    """The heads of the filed entries that are still there for the caller, in entry id order."""

    @property
    def revisions(self) -> list[tuple[str, int]]:
        return [(head.entry_id, head.revision) for head in self.live]

    def stale(self, page: PageRecord) -> bool:
        return summary_stale(self.revisions, page.summarized_from, page.summary is not None)


def filed(table: Table, caller: Caller, page: PageRecord, now: float) -> Filed:
    workspace_id = caller.workspace.id
    filings = page_queries.filings(table, workspace_id, page.page_id)
    heads = page_queries.heads(table, workspace_id, [f.entry_id for f in filings])
    live = [head for head in heads if isinstance(head, EntryRecord) and visible(head, caller) and not head.expired(now)]
    return Filed(filings, live)
