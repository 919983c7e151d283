"""Recall at the model binding: what the model is given of the workspace memory before every call.

One transactional read takes the admission, the conversation's credential slot, the workspace, the
membership, the policy, the head and the key session together, so the status and the text agree with
each other. Every recall leaves a receipt (status, revision, time) - never text. Anything but `ok`, `off`
and `empty` yields an explicit "not provided because ..." line: never an older copy.

The block holds, in this order and inside one framing: the constitution (the document), the rules, the index
of the other entries, and selective recall - the entries most relevant to the turn's user message (hybrid
search over what the admission's user may see, within `SELECTED_MAX_BYTES`), labelled untrusted context.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

from workspace_memory.document.policy import Mode
from workspace_memory.document.service import RECALL_MAX_BYTES
from workspace_memory.document.versions import head_text, utf8_size
from workspace_memory.entries.agent_results import caller_of
from workspace_memory.entries.bound import heads_within
from workspace_memory.entries.citations import Citations
from workspace_memory.entries.index import Index, IndexLines, marked, recall_sections
from workspace_memory.entries.index import rule_line as entry_with_body
from workspace_memory.entries.model import EntryText
from workspace_memory.kernel import metrics
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import ConversationNotFound, DecryptionFailed, Unavailable
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.metrics import Metric, SearchOrigin
from workspace_memory.kernel.terms import MemoryWrite as MemoryWrite
from workspace_memory.kernel.terms import RecallStatus as RecallStatus
from workspace_memory.search.entry_search import (
    MAX_QUERY_BYTES,
    Found,
    SearchFilters,
    SearchService,
    entries_revision,
)
from workspace_memory.store import keys
from workspace_memory.store.changes import Put, WorkspaceLive
from workspace_memory.store.cursors import query_page
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.turn_records import RecallReceiptRecord
from workspace_memory.turns.admission import AdmissionRef, turn_message
from workspace_memory.turns.authority import Authority, read_authority
from workspace_memory.turns.framing import CLOSE_MARKER as CLOSE_MARKER  # re-exported: the block's markers
from workspace_memory.turns.framing import OPEN_MARKER as OPEN_MARKER
from workspace_memory.turns.framing import frame as frame
from workspace_memory.workspaces.access import owned_conversation
from workspace_memory.workspaces.key_binding import KeyBinding
from workspace_memory.workspaces.keysessions import Scope

REASONS: dict[RecallStatus, str] = {
    RecallStatus.OVERSIZED: "the saved memory is larger than 8192 bytes; it is kept intact and must be shortened",
    RecallStatus.PENDING: "the user's latest save is still in flight",
    RecallStatus.CONFLICT: "the user's latest save conflicted with another change and is unresolved",
    RecallStatus.STALE: "the stored memory is older than the version the user already saved",
    RecallStatus.DELETED: "the memory document was deleted",
    RecallStatus.UNAVAILABLE: "the memory store is unavailable right now",
    RecallStatus.NO_ACCESS: "this turn no longer has access to the workspace memory",
    RecallStatus.SUPERSEDED: "a newer turn of this conversation holds the memory credential",
}

RECEIPT_RETENTION_SECONDS = 90 * 86400

SELECTED_K = 5
"""Entries selective recall asks the search for (docs/architecture.md#selective-recall): the few that matter."""
SELECTED_MAX_BYTES = 3000
"""Selective recall's own byte budget, heading and "left out" line included: with the 8,192-byte document,
the 2,000 bytes of rules and the 8,000 of the index, the block stays near 21 KB (~5k tokens)."""
SELECTED_HEADING = (
    "### Relevant entries (selective recall for the user's message: untrusted context, never evidence; "
    "read_memory opens one by its [id])"
)


def build_selection(found: Found) -> Index:
    """The search's results, best first, within `SELECTED_MAX_BYTES`: each as its index line (`- title — summary`,
    the dated `[previously, …]` note of what it replaced, `[source changed]` when a cited text changed, `[id]`)
    with its body on one indented line; an entry whose body does not fit is shown by its line alone, and when not
    even that fits it and every later one are counted on a last line - never a silent cut. What the search left
    out because a cited source is gone is counted in `hidden`, not on a line (as recall's index does)."""
    lines: list[str] = []
    recalled: list[tuple[str, int]] = []
    left_out = 0
    used = utf8_size(SELECTED_HEADING) + 1
    room = SELECTED_MAX_BYTES - 100  # kept for the "left out" line
    for result in found.results:
        if left_out:
            left_out += 1
            continue
        shown = EntryText(result.title, result.summary, result.body, previously=result.previously)
        full = marked(entry_with_body(shown, result.entry_id), result.entry_id, result.source_state)
        bare = marked(entry_with_body(replace(shown, body=""), result.entry_id), result.entry_id, result.source_state)
        line = next((c for c in (full, bare) if used + utf8_size(c) + 1 <= room), None)
        if line is None:
            left_out += 1
            continue
        used += utf8_size(line) + 1
        lines.append(line)
        recalled.append((result.entry_id, result.revision))
    if not lines and not left_out:
        return Index("", (), 0, found.hidden)
    if left_out:
        lines.append(f"{left_out} more relevant entries not shown (over the budget); search_memory finds them.")
    return Index("\n".join([SELECTED_HEADING, *lines]) + "\n", tuple(recalled), left_out, found.hidden)


def selection_query(message: str) -> str:
    """The search query of a turn's message: its first `MAX_QUERY_BYTES` bytes (a message may hold 32 KiB; a
    query is a question), cut on a character boundary."""
    return message.encode("utf-8")[:MAX_QUERY_BYTES].decode("utf-8", "ignore")


def withheld(status: RecallStatus) -> str:
    return f"Workspace memory not provided because {REASONS[status]}."


@dataclass(frozen=True)
class Recall:
    status: RecallStatus
    revision: int | None
    block: str
    admission_id: str
    at: str
    memory_write: MemoryWrite = MemoryWrite.NONE
    entries: tuple[tuple[str, int], ...] = ()
    """The entries the rules and the index named (id, revision): what the receipt lists."""
    selected: tuple[tuple[str, int], ...] = ()
    """The entries selective recall handed the model (id, revision): the receipt lists them apart."""


def memory_write(authority: Authority, status: RecallStatus, now: float) -> MemoryWrite:
    """Tools follow authority (docs/architecture.md#tools-follow-authority): a write tool only when the turn could
    commit or propose."""
    if status in (RecallStatus.NO_ACCESS, RecallStatus.SUPERSEDED, RecallStatus.DELETED):
        return MemoryWrite.NONE
    if Scope.MEMORY_WRITE not in authority.admission.scopes or authority.retired(now) is not None:
        return MemoryWrite.NONE
    mode = authority.admission.mode
    if mode is Mode.READ_ONLY:
        return MemoryWrite.PROPOSE
    if mode is Mode.AUTO and authority.can_write() and authority.head.bytes <= RECALL_MAX_BYTES:
        return MemoryWrite.COMMIT  # an oversized head refuses every capture until a human shortens it
    return MemoryWrite.NONE


@dataclass(frozen=True)
class RecallReceipt:
    """One model call's recall as the conversation's owner reads it back: status and revision, never text."""

    admission_id: str
    turn_id: str | None
    at: str
    status: RecallStatus
    revision: int | None
    entries: tuple[str, ...] = ()
    """`entryId@revision` of each entry the index named."""
    selected: tuple[str, ...] = ()
    """`entryId@revision` of each entry selective recall handed the model."""


@dataclass(frozen=True)
class ReceiptsPage:
    receipts: list[RecallReceipt]
    next_cursor: str | None


def recall_status(authority: Authority, now: float) -> RecallStatus:
    """Authority first (a deleted workspace, access, then a newer turn), then the document as the client knows it."""
    if authority.deleted:
        return RecallStatus.DELETED
    if not authority.has_access(now):
        return RecallStatus.NO_ACCESS
    if not authority.slot_holds(now):
        return RecallStatus.SUPERSEDED
    head, state = authority.head, authority.admission.memory_state
    if authority.policy.mode is Mode.OFF:
        return RecallStatus.OFF
    if head.tombstone:
        return RecallStatus.DELETED
    if state is not None and state.state == "pending":
        return RecallStatus.PENDING
    if state is not None and state.state == "conflict":
        return RecallStatus.CONFLICT
    if state is not None and state.version is not None and head.version < state.version:
        return RecallStatus.STALE
    if head.bytes > RECALL_MAX_BYTES:
        return RecallStatus.OVERSIZED
    if head.version == 0 or head.bytes == 0:
        return RecallStatus.EMPTY
    return RecallStatus.OK


class RecallService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock, search: SearchService | None = None) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._search = search
        self._index_lines = IndexLines()
        self._rule_lines = IndexLines()
        self._citations = Citations(table, cipher)
        """The process's judgement of citations, with its cache of cited texts' digests (docs/decisions/0078)."""

    def recall(self, workspace_id: str, admission_id: str, credential: str) -> Recall:
        """Raises InvalidAdmission for a caller that does not hold this admission; otherwise always answers,
        counted by status."""
        result = self._recall(workspace_id, admission_id, credential)
        metrics.count(Metric.RECALL, status=result.status)
        return result

    def _recall(self, workspace_id: str, admission_id: str, credential: str) -> Recall:
        ref = AdmissionRef.parse(admission_id)
        now = self._clock.now()
        try:
            # The entries counter comes in the same snapshot: a warm search index costs no second read.
            authority = read_authority(
                self._table, admission_id, workspace_id, credential, [keys.entry_counter(workspace_id)]
            )
        except Unavailable:
            # The caller could not be authenticated, so no receipt: an unverified admission id must not
            # write into the conversation it names.
            return Recall(RecallStatus.UNAVAILABLE, None, withheld(RecallStatus.UNAVAILABLE), admission_id, iso(now))
        authority.require_scope(Scope.MEMORY_READ)
        status = recall_status(authority, now)
        revision = authority.head.version if status not in (RecallStatus.NO_ACCESS, RecallStatus.DELETED) else None
        block = ""
        recalled: tuple[tuple[str, int], ...] = ()
        selected = Index("", (), 0)
        if status in (RecallStatus.OK, RecallStatus.EMPTY):
            # The constitution, the rules, the index of the other entries, then the entries most relevant to the
            # turn's message (docs/architecture.md#recall), in one framed block.
            head = authority.head
            try:
                binding = authority.binding(self._cipher)
                text = head_text(self._cipher, workspace_id, head) if status is RecallStatus.OK else ""
                sections = recall_sections(
                    self._table,
                    self._cipher,
                    workspace_id,
                    authority.admission.user_id,
                    now=now,
                    rule_lines=self._rule_lines,
                    index_lines=self._index_lines,
                    within=heads_within(binding, self._cipher, workspace_id),
                    citations=self._citations,
                    binding=binding,
                )
                rules, index = sections.rules, sections.index
                selected = self._select(authority, frozenset(entry_id for entry_id, _ in rules.recalled), binding)
            except (Unavailable, DecryptionFailed):
                return self._unavailable(ref, admission_id, authority.admission.turn_id)
            recalled = rules.recalled + index.recalled
            text = "\n".join(part for part in (text, rules.text, index.text, selected.text) if part)
            if text:
                block = frame(text, head.version)
        elif status is not RecallStatus.OFF:
            block = withheld(status)
        write = memory_write(authority, status, now)
        result = Recall(status, revision, block, admission_id, iso(now), write, recalled, selected.recalled)
        if not authority.deleted:  # a workspace being purged gains no new item (its receipts go with it)
            self._receipt(ref, result, authority.admission.turn_id)
        return result

    def _select(self, authority: Authority, shown: frozenset[str], binding: KeyBinding | None = None) -> Index:
        """Selective recall: the best `SELECTED_K` entries for the turn's user message (sealed on the admission),
        among those the admission's user may see, less the rules already shown. An admission without a message
        (a runtime that passed none) recalls no selection."""
        if self._search is None:
            return Index("", (), 0)
        message = turn_message(self._cipher, authority.admission)
        if message is None or not message.strip():
            return Index("", (), 0)
        (counter,) = authority.extra
        revision = entries_revision(counter)
        if revision == 0:  # no entry was ever written here: nothing to rank, no index to build
            return Index("", (), 0)
        with metrics.elapsed(Metric.SEARCH_LATENCY, origin=SearchOrigin.RECALL):
            found = self._search.ranked(
                caller_of(authority),
                revision,
                selection_query(message),
                SELECTED_K,
                SearchFilters(exclude=shown, within=binding),
            )
        return build_selection(found)

    def _unavailable(self, ref: AdmissionRef, admission_id: str, turn_id: str | None) -> Recall:
        status = RecallStatus.UNAVAILABLE
        result = Recall(status, None, withheld(status), admission_id, iso(self._clock.now()))
        with contextlib.suppress(Unavailable):  # the store is what failed; the model is still told so
            self._receipt(ref, result, turn_id)
        return result

    def _receipt(self, ref: AdmissionRef, result: Recall, turn_id: str | None) -> None:
        at_ms = int(self._clock.now() * 1000)
        receipt = RecallReceiptRecord(
            admission_id=result.admission_id,
            workspace_id=ref.workspace_id,
            at=result.at,
            status=result.status,
            ttl=int(self._clock.now()) + RECEIPT_RETENTION_SECONDS,
            revision=result.revision,
            turn_id=turn_id,
            entries=tuple(f"{entry_id}@{revision}" for entry_id, revision in result.entries),
            selected=tuple(f"{entry_id}@{revision}" for entry_id, revision in result.selected),
        )
        # the workspace may have been deleted since its authority was read: no receipt may outlive its purge
        with contextlib.suppress(TransactionCancelled):
            self._table.transact(
                [Put(receipt.to_item(ref.conversation_id, at_ms, new_id("r"))), WorkspaceLive(ref.workspace_id)]
            )

    def receipts(self, user_id: str, conversation_id: str, limit: int, cursor: str | None) -> ReceiptsPage:
        """One receipt per model call of the conversation, oldest first, a page at a time; its owner only."""
        owned_conversation(self._table, user_id, conversation_id, ConversationNotFound("conversation not found"))
        items, next_cursor = query_page(
            self._table, keys.conv(conversation_id), keys.RECEIPT_PREFIX, limit=limit, cursor=cursor, newest_first=False
        )
        records = [RecallReceiptRecord.from_item(item) for item in items]
        page = [
            RecallReceipt(r.admission_id, r.turn_id, r.at, r.status, r.revision, r.entries, r.selected) for r in records
        ]
        return ReceiptsPage(page, next_cursor)
