"""Reading entries: one entry (now or `asOf`, its citations re-checked), a filtered list of heads, a chain's
history. Nothing the caller may not see is decrypted or returned: a member's entry is its member's alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from workspace_memory.entries.bound import admits_head
from workspace_memory.entries.citations import Citations, overall
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
from workspace_memory.kernel.errors import (
    EntryForgotten,
    EntryNotFound,
    RevertToCurrent,
    RevisionNotFound,
)
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import CitationState
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.store.entry_records import EntryHead, EntryRecord, Tombstone, head_of
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.workspaces.access import Caller, load_caller
from workspace_memory.workspaces.key_binding import KeyBinding


def _row(
    record: EntryHead, text: EntryText | None, reason: str | None = None, head: EntryRecord | None = None
) -> EntryRow:
    """A list's or history's line; a forgotten chain's has no text, type, validity or author. A list line
    (`head` given) carries its chain's read counts and its size."""
    live = None if isinstance(record, Tombstone) else record
    size = None if text is None or head is None else len(f"{text.title}{text.summary}{text.body}".encode())
    return EntryRow(
        entry_id=record.entry_id,
        revision=record.revision,
        scope=record.scope,
        type=None if live is None else live.type,
        status=record.status,
        title=None if text is None else text.title,
        summary=None if text is None else text.summary,
        valid_from=None if live is None else live.valid_from,
        valid_to=None if live is None else live.superseded_at,
        author=None if live is None else live.author,
        superseded_reason=reason,
        reads=None if head is None else head.read_count or 0,
        last_read_at=None if head is None else head.last_read_at,
        size_bytes=size,
        pinned=None if head is None else head.pinned,
        verified_at=None if head is None or record is not head else head.verified_at,
        verified_by=None if head is None or record is not head else head.verified_by,
        verified_evidence=None if head is None or record is not head else head.verified_evidence,
    )


def _valid_at(record: EntryRecord, at: float) -> bool:
    end = record.superseded_at
    return epoch_time(record.valid_from) <= at and (end is None or at < epoch_time(end))


class EntryReads:
    def __init__(
        self,
        table: Table,
        cipher: Cipher,
        clock: Clock,
        key_secret: KeySecret,
        counts: ReadCounts,
        citations: Citations | None = None,
    ) -> None:
        self._table = table
        self.citations = citations if citations is not None else Citations(table, cipher)
        self._cipher = cipher
        self._clock = clock
        self._key_secret = key_secret
        self._counts = counts

    # -- what every part reads through -----------------------------------------------------------------

    def open(self, workspace_id: str, record: EntryRecord) -> EntryText:
        context = entry_context(workspace_id, record.entry_id, record.revision)
        return EntryText.parse(unseal(self._cipher, record.ciphertext, context, record.sha256))

    def revision_text(self, workspace_id: str, entry_id: str, revision: int) -> EntryText | None:
        """The text of a revision a proposal names, for the person deciding it (the candidate holds none): None
        once that revision is gone (forgotten, or expired after its supersession)."""
        record = entry_queries.entry_revision(self._table, workspace_id, entry_id, revision)
        if record is None or record.expired(self._clock.now()):
            return None
        return self.open(workspace_id, record)

    def reason(self, workspace_id: str, record: EntryRecord, opened: dict[int, EntryText] | None = None) -> str | None:
        """Why `record` was superseded: sealed in its successor's text (decisions/0055), read from `opened` (the
        texts a page already decrypted, by revision) or decrypted here; None once the successor is gone."""
        if record.superseded_by is None:
            return None
        text = (opened or {}).get(record.superseded_by)
        if text is None:
            successor = entry_queries.entry_revision(self._table, workspace_id, record.entry_id, record.superseded_by)
            if successor is None or successor.expired(self._clock.now()):
                return None
            text = self.open(workspace_id, successor)
        return text.reason

    def visible_head(self, caller: Caller, head: EntryHead | None) -> EntryHead:
        """The head the caller may see (404 otherwise, the same for missing, private and an agent memory past
        its window, which is gone whether or not TTL deleted it yet)."""
        if head is None or not visible(head, caller) or self._expired(head):
            raise EntryNotFound("entry not found")
        return head

    def _expired(self, head: EntryHead) -> bool:
        return isinstance(head, EntryRecord) and head.expired(self._clock.now())

    def live_head(self, caller: Caller, head: EntryHead | None) -> EntryRecord:
        """The head the caller may see, of a chain not forgotten (410 for a forgotten one)."""
        found = self.visible_head(caller, head)
        if isinstance(found, Tombstone):
            raise EntryForgotten("entry was forgotten")
        return found

    # -- the routes ------------------------------------------------------------------------------------

    def read(
        self,
        user_id: str,
        workspace_id: str,
        entry_id: str,
        as_of: float | None = None,
        within: KeyBinding | None = None,
    ) -> EntryView:
        """`within`: a key session's binding (decisions/0077): an entry outside it is not found, and neither counted
        as read nor are its citations checked; a cited entry outside it is `hidden`."""
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self.live_head(caller, head_of(found))
        record = head if as_of is None else self._revision_at(workspace_id, head, as_of)
        text = self.open(workspace_id, record)
        if within is not None and not within.admits(record.scope, record.type, text.key):
            raise EntryNotFound("entry not found")
        states = self.judge(caller, text.sources, within)
        citations = tuple(Citation(s, state) for s, state in zip(text.sources, states, strict=True))
        self._counts.count(workspace_id, entry_id)
        return EntryView(
            entry_id=entry_id,
            revision=record.revision,
            scope=record.scope,
            type=record.type,
            status=record.status,
            text=text,
            valid_from=record.valid_from,
            valid_to=record.superseded_at,
            author=record.author,
            author_kind=record.author_kind,
            superseded_by=record.superseded_by,
            superseded_by_entry=record.superseded_by_entry,
            superseded_reason=self.reason(workspace_id, record),
            citations=citations,
            reads=head.read_count or 0,
            last_read_at=head.last_read_at,
            pinned=head.pinned,
            verified_at=head.verified_at if record is head else None,
            verified_by=head.verified_by if record is head else None,
            verified_evidence=head.verified_evidence if record is head else None,
        )

    def earlier_revision(self, user_id: str, workspace_id: str, entry_id: str, revision: int) -> EntryRecord:
        """An earlier, still retained revision of a chain the caller may see (a revert's source)."""
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self.live_head(caller, head_of(found))
        if revision == head.revision:
            raise RevertToCurrent(f"revision {revision} is the current revision")
        record = None
        if revision < head.revision:
            record = entry_queries.entry_revision(self._table, workspace_id, entry_id, revision)
        if record is None or record.expired(self._clock.now()):
            raise RevisionNotFound(f"entry has no revision {revision}")
        return record

    def _revision_at(self, workspace_id: str, head: EntryRecord, at: float) -> EntryRecord:
        if _valid_at(head, at):
            return head
        now = self._clock.now()
        for record in entry_queries.entry_revisions(self._table, workspace_id, head.entry_id):
            if not record.expired(now) and _valid_at(record, at):
                return record
        raise EntryNotFound("no revision of this entry was valid then")

    def require_within(self, workspace_id: str, head: EntryRecord, within: KeyBinding | None) -> None:
        """An entry outside a bound key session's context is not found, as one the session cannot see."""
        if within is not None and not admits_head(within, self._cipher, workspace_id, head):
            raise EntryNotFound("entry not found")

    def judge(self, caller: Caller, sources: Sequence[Source], within: KeyBinding | None = None) -> list[CitationState]:
        """`sources` re-checked now for the caller (within a bound key session's context), as the list does."""
        (states,) = self.citations.judge(caller.workspace.id, caller.user_id, [sources], self._clock.now(), within)
        return states

    def list_entries(
        self,
        user_id: str,
        workspace_id: str,
        filters: Filters,
        limit: int,
        cursor: str | None,
        within: KeyBinding | None = None,
    ) -> Page:
        """Heads the caller may see, filtered before anything is decrypted or returned: up to `limit` matches,
        then their citations judged together (docs/decisions/0078). A match whose cited source is gone or not
        visible to the caller is left out and counted (`hidden`), so a page may hold fewer than `limit` rows;
        the cursor resumes after the last head matched, shown or hidden. `within`: a key session's binding
        (decisions/0077): a head outside it is no match (not counted), and a cited entry outside it is hidden."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        lookup = None if filters.key is None else self._key_secret.lookup(workspace_id, filters.key)
        after = None if cursor is None else decode_cursor(cursor, keys.ENTRY_PREFIX)
        matched: list[tuple[EntryRow, tuple[Source, ...]]] = []
        next_cursor = None
        heads = entry_queries.entry_heads(self._table, workspace_id, after=after)
        for position, head in heads:
            match = self._match(caller, head, filters, lookup, within)
            if match is not None:
                matched.append(match)
                if len(matched) == limit:
                    next_cursor = encode_cursor(position) if next(heads, None) is not None else None
                    break
        states = self.citations.judge(workspace_id, user_id, [s for _, s in matched], self._clock.now(), within)
        rows = [replace(row, source_state=overall(st)) for (row, _), st in zip(matched, states, strict=True)]
        shown = [row for row in rows if row.source_state is not CitationState.HIDDEN]
        return Page(shown, next_cursor, hidden=len(rows) - len(shown))

    def _match(
        self, caller: Caller, head: EntryHead, filters: Filters, lookup: str | None, within: KeyBinding | None
    ) -> tuple[EntryRow, tuple[Source, ...]] | None:
        if not visible(head, caller) or self._expired(head):
            return None
        if filters.scope is not None and head.scope is not filters.scope:
            return None
        if head.status is not filters.status:
            return None
        if isinstance(head, Tombstone):  # no type and no key: inside a binding of scopes alone
            if lookup is not None or filters.type is not None:
                return None
            return None if within is not None and not within.admits(head.scope, None, None) else (_row(head, None), ())
        if filters.type is not None and head.type is not filters.type:
            return None
        if within is not None and not within.admits_kind(head.scope, head.type):
            return None
        if lookup is not None and head.key_lookup != lookup:
            return None
        record = head
        if filters.as_of is not None:
            try:
                record = self._revision_at(caller.workspace.id, head, filters.as_of)
            except EntryNotFound:
                return None
        workspace_id = caller.workspace.id
        text = self.open(workspace_id, record)
        if within is not None and not within.admits_key(text.key):
            return None
        return _row(record, text, self.reason(workspace_id, record), head), text.sources

    def history(self, user_id: str, workspace_id: str, entry_id: str, limit: int, cursor: str | None) -> Page:
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        self.live_head(caller, head_of(found))
        page, next_cursor = entry_queries.entry_revision_page(
            self._table, workspace_id, entry_id, limit=limit, cursor=cursor
        )
        now = self._clock.now()
        kept = [r for r in page if not r.expired(now)]
        opened = {r.revision: self.open(workspace_id, r) for r in kept}
        rows = [_row(r, opened[r.revision], self.reason(workspace_id, r, opened)) for r in kept]
        return Page(rows, next_cursor)
