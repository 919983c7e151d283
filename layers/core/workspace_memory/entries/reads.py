"""Reading entries: one entry (now or `asOf`, its citations re-checked), a filtered list of heads, a chain's
history. Nothing the caller may not see is decrypted or returned: a member's entry is its member's alone."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

from workspace_memory.document.service import document_context, is_expired
from workspace_memory.entries.key_secret import KeySecret
from workspace_memory.entries.model import (
    Citation,
    EntryRow,
    EntryText,
    EntryView,
    Filters,
    Page,
    Source,
    entry_context,
)
from workspace_memory.entries.read_counts import ReadCounts
from workspace_memory.entries.scopes import visible
from workspace_memory.kernel.clock import Clock, epoch_time
from workspace_memory.kernel.errors import EntryForgotten, EntryNotFound
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import CitationKind, CitationState, EntryScope, EntryStatus, EntryType
from workspace_memory.store import keys
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.store.ports import Cipher, Item, Table
from workspace_memory.workspaces.access import Caller, load_caller


def _row(item: Item, text: EntryText | None) -> EntryRow:
    return EntryRow(
        entry_id=item["entryId"],
        revision=int(item["revision"]),
        scope=EntryScope(item["scope"]),
        type=EntryType(item["type"]) if "type" in item else None,
        status=EntryStatus(item["status"]),
        title=None if text is None else text.title,
        summary=None if text is None else text.summary,
        valid_from=item.get("validFrom"),
        valid_to=item.get("supersededAt"),
        author=item.get("author"),
        superseded_reason=item.get("supersededReason"),
    )


def _valid_at(item: Item, at: float) -> bool:
    start = item.get("validFrom")
    end = item.get("supersededAt")
    return start is not None and epoch_time(start) <= at and (end is None or at < epoch_time(end))


class EntryReads:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock, key_secret: KeySecret, counts: ReadCounts) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._key_secret = key_secret
        self._counts = counts

    # -- what every part reads through -----------------------------------------------------------------

    def open(self, workspace_id: str, item: Item) -> EntryText:
        context = entry_context(workspace_id, item["entryId"], int(item["revision"]))
        return EntryText.parse(unseal(self._cipher, item["ciphertext"], context, item.get("sha256")))

    def visible_head(self, caller: Caller, head: Item | None) -> Item:
        """The head the caller may see (404 otherwise, the same for missing and private)."""
        if head is None or not visible(head, caller):
            raise EntryNotFound("entry not found")
        return head

    def live_head(self, caller: Caller, head: Item | None) -> Item:
        """The head the caller may see, of a chain not forgotten (410 for a forgotten one)."""
        found = self.visible_head(caller, head)
        if found["status"] != EntryStatus.ACTIVE.value:
            raise EntryForgotten("entry was forgotten")
        return found

    def revisions(self, workspace_id: str, entry_id: str) -> Iterator[Item]:
        """Every stored revision item of a chain, oldest first (expired ones included: the caller judges)."""
        yield from self._all(workspace_id, keys.entry_revisions_prefix(entry_id))

    def heads(self, workspace_id: str) -> Iterator[Item]:
        """Every head of the workspace (forgotten ones included), in entry id order."""
        yield from self._all(workspace_id, keys.ENTRY_PREFIX)

    def _all(self, workspace_id: str, prefix: str) -> Iterator[Item]:
        start_after: str | None = None
        while True:
            page = self._table.query(
                keys.ws(workspace_id), prefix, limit=100, newest_first=False, start_after=start_after
            )
            if not page:
                return
            yield from page
            start_after = page[-1]["sk"]

    # -- the routes ------------------------------------------------------------------------------------

    def read(self, user_id: str, workspace_id: str, entry_id: str, as_of: float | None = None) -> EntryView:
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self.live_head(caller, found)
        item = head if as_of is None else self._revision_at(workspace_id, head, as_of)
        text = self.open(workspace_id, item)
        citations = tuple(Citation(s, self._check(caller, s)) for s in text.sources)
        self._counts.count(workspace_id, entry_id)
        status = EntryStatus.ACTIVE if item is head else EntryStatus(item["status"])
        return EntryView(
            entry_id=entry_id,
            revision=int(item["revision"]),
            scope=EntryScope(item["scope"]),
            type=EntryType(item["type"]),
            status=status,
            text=text,
            valid_from=item["validFrom"],
            valid_to=item.get("supersededAt"),
            author=item["author"],
            author_kind=item.get("authorKind", "human"),
            superseded_by=item.get("supersededBy"),
            superseded_reason=item.get("supersededReason"),
            citations=citations,
        )

    def _revision_at(self, workspace_id: str, head: Item, at: float) -> Item:
        if _valid_at(head, at):
            return head
        now = self._clock.now()
        for item in self.revisions(workspace_id, head["entryId"]):
            if not is_expired(item, now) and _valid_at(item, at):
                return item
        raise EntryNotFound("no revision of this entry was valid then")

    def _check(self, caller: Caller, source: Source) -> CitationState:
        """A citation re-checked now: the cited text's SHA-256 against the one recorded."""
        workspace_id = caller.workspace.id
        if source.kind is CitationKind.ENTRY:
            target = self._table.get(*keys.entry(workspace_id, source.ref))
            if target is None or not visible(target, caller) or target.get("status") != EntryStatus.ACTIVE.value:
                return CitationState.HIDDEN
            cited = self.open(workspace_id, target).body
        else:
            if not source.ref.isdigit() or not source.ref.isascii() or len(source.ref) > 12:
                return CitationState.HIDDEN
            number = int(source.ref)
            version = self._table.get(*keys.version(workspace_id, number))
            if version is None or is_expired(version, self._clock.now()) or "ciphertext" not in version:
                return CitationState.HIDDEN
            cited = unseal(self._cipher, version["ciphertext"], document_context(workspace_id, number))
        digest = hashlib.sha256(cited.encode("utf-8")).hexdigest()
        return CitationState.OK if hmac.compare_digest(digest, source.sha256) else CitationState.CHANGED

    def list_entries(self, user_id: str, workspace_id: str, filters: Filters, limit: int, cursor: str | None) -> Page:
        """Heads the caller may see, filtered before anything is decrypted or returned."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        lookup = None if filters.key is None else self._key_secret.lookup(workspace_id, filters.key)
        start_after = None if cursor is None else decode_cursor(cursor, keys.ENTRY_PREFIX)
        rows: list[EntryRow] = []
        last: str | None = None
        while len(rows) < limit:
            page = self._table.query(
                keys.ws(workspace_id), keys.ENTRY_PREFIX, limit=100, newest_first=False, start_after=start_after
            )
            if not page:
                return Page(rows, None)
            for head in page:
                start_after = head["sk"]
                row = self._match(caller, head, filters, lookup)
                if row is not None:
                    rows.append(row)
                    last = head["sk"]
                    if len(rows) == limit:
                        break
        more = self._table.query(
            keys.ws(workspace_id), keys.ENTRY_PREFIX, limit=1, newest_first=False, start_after=last
        )
        return Page(rows, encode_cursor(last) if more and last is not None else None)

    def _match(self, caller: Caller, head: Item, filters: Filters, lookup: str | None) -> EntryRow | None:
        if not visible(head, caller):
            return None
        if filters.scope is not None and head["scope"] != filters.scope.value:
            return None
        if head["status"] != filters.status.value:
            return None
        if head["status"] == EntryStatus.FORGOTTEN.value:
            return None if lookup is not None or filters.type is not None else _row(head, None)
        if filters.type is not None and head["type"] != filters.type.value:
            return None
        if lookup is not None and head.get("keyLookup") != lookup:
            return None
        item = head
        if filters.as_of is not None:
            try:
                item = self._revision_at(caller.workspace.id, head, filters.as_of)
            except EntryNotFound:
                return None
        return _row(item, self.open(caller.workspace.id, item))

    def history(self, user_id: str, workspace_id: str, entry_id: str, limit: int, cursor: str | None) -> Page:
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        self.live_head(caller, found)
        prefix = keys.entry_revisions_prefix(entry_id)
        start_after = None if cursor is None else decode_cursor(cursor, prefix)
        items = self._table.query(
            keys.ws(workspace_id), prefix, limit=limit + 1, newest_first=True, start_after=start_after
        )
        next_cursor = encode_cursor(items[limit - 1]["sk"]) if len(items) > limit else None
        now = self._clock.now()
        rows = [_row(i, self.open(workspace_id, i)) for i in items[:limit] if not is_expired(i, now)]
        return Page(rows, next_cursor)
