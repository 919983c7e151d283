"""Memory entries (docs/architecture.md#entries): small titled memories beside the document, in supersession chains.

A chain keeps one `entryId`; each write is a new immutable revision item (`ENTRYREV#{id}#{rev}`) and the
head (`ENTRY#{id}`) carries the current revision's ciphertext, so a read is one round trip and one Query of
the `ENTRY#` prefix lists heads only. Every write is one transaction: the head moves from exactly the base
revision (two writers from one base: one wins, the chain never forks), the revision is created, the
predecessor is marked superseded with its retention `ttl`, the workspace's version counter stays under the
cap, and the writer still has the right to write. Text (key, title, summary, body, sources) is sealed under
the workspace's branch key; a key is found by an HMAC under a per-workspace secret that is itself sealed
under the branch key (so deleting the workspace's key shreds it too). Forget deletes every revision and
leaves a text-free tombstone head.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import secrets
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from workspace_memory.document.service import DAY_SECONDS, document_context, is_expired
from workspace_memory.entries.model import (
    Author,
    CandidateView,
    Citation,
    Draft,
    EntryRow,
    EntryText,
    EntryView,
    Filters,
    Page,
    SealedVector,
    Source,
    Written,
    candidate_context,
    entry_context,
    secret_context,
)
from workspace_memory.entries.validation import redacted, redaction_warnings, validate
from workspace_memory.governance.redaction import Finding
from workspace_memory.kernel.clock import Clock, epoch_seconds, epoch_time, iso
from workspace_memory.kernel.errors import (
    CandidateNotFound,
    Conflict,
    DomainError,
    EntryCap,
    EntryForgotten,
    EntryNotFound,
    Forbidden,
    RateLimited,
    StaleRevision,
    WorkspaceNotFound,
)
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.kernel.terms import (
    CandidateKind,
    CandidateStatus,
    CitationKind,
    CitationState,
    EntryScope,
    EntryStatus,
    EntryType,
)
from workspace_memory.search import search_snapshot
from workspace_memory.store import keys
from workspace_memory.store.changes import (
    Change,
    CountAgentWrite,
    CountEntryRead,
    CountEntryVersions,
    Create,
    Delete,
    Label,
    MemberExists,
    MoveEntryHead,
    ReplaceRevision,
    RetentionIs,
    SupersedeEntryRevision,
)
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.store.ports import Cipher, Item, Table, TransactionCancelled
from workspace_memory.store.stale import stale_entry
from workspace_memory.workspaces.access import Caller, load_caller

if TYPE_CHECKING:
    from workspace_memory.search.engine import Embedder

ENTRY_VERSION_CAP = 5000
"""Stored entry versions per workspace (docs/architecture.md#caps): 409 `ENTRY_CAP` beyond it."""
AGENT_WRITES_PER_HOUR = 120
"""Agent entry writes (candidates included) per user and workspace and clock hour: 429 beyond it."""

WORKSPACE_OWNER = "-"
"""The scope owner of `workspace` entries (member entries: the member's user id; agent entries: the agent)."""
DEFAULT_AGENT = "default"
FORGET_BATCH = 90
"""Revisions deleted per forget transaction (plus head, key, counter and right: under DynamoDB's 100)."""
CANDIDATE_TTL_SECONDS = 30 * DAY_SECONDS
SECRET_CACHE_SIZE = 1024
HOUR = 3600


FENCE_LABELS = frozenset(
    {Label.ADMISSION, Label.POLICY, Label.CONSENT, Label.CREDENTIAL, Label.KEY_SESSION, Label.ACCESS, Label.IDEMPOTENCY}
)
"""What an agent's fenced write can fail on beside the entry's own conditions: the turn's authority."""


class Fenced(Exception):
    """A fenced write's transaction failed on the turn's authority: `failed` names the labels; the caller
    (the agent's save) answers with the predicate."""

    def __init__(self, failed: frozenset[str]) -> None:
        super().__init__(", ".join(sorted(failed)))
        self.failed = failed


@dataclass
class _Secrets:
    """Workspace -> HMAC secret for entry keys, per process (bounded, oldest out)."""

    by_workspace: dict[str, bytes] = field(default_factory=dict)

    def get(self, workspace_id: str) -> bytes | None:
        return self.by_workspace.get(workspace_id)

    def put(self, workspace_id: str, secret: bytes) -> None:
        if len(self.by_workspace) >= SECRET_CACHE_SIZE:
            del self.by_workspace[next(iter(self.by_workspace))]
        self.by_workspace[workspace_id] = secret


# -- items ------------------------------------------------------------------------------------------------


def _visible(item: Item, caller: Caller) -> bool:
    """Member entries are their member's alone; workspace and agent entries every member reads."""
    return bool(item["scope"] != EntryScope.MEMBER.value or item["scopeOwner"] == caller.user_id)


def _hmac(secret: bytes, *parts: str) -> str:
    return hmac.new(secret, "\x00".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()


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


def _rights(
    right: Callable[[Caller, str, str], Change], caller: Caller, scope: str, owner: str, fence: Sequence[Change] | None
) -> list[Change]:
    """The writer's right as a check of its own, unless a fence re-states it (one check per item)."""
    return [right(caller, scope, owner)] if fence is None else []


def _valid_at(item: Item, at: float) -> bool:
    start = item.get("validFrom")
    end = item.get("supersededAt")
    return start is not None and epoch_time(start) <= at and (end is None or at < epoch_time(end))


class EntryService:
    def __init__(
        self,
        table: Table,
        cipher: Cipher,
        clock: Clock,
        *,
        version_cap: int = ENTRY_VERSION_CAP,
        agent_writes_per_hour: int = AGENT_WRITES_PER_HOUR,
        embedder: Embedder | None = None,
    ) -> None:
        self._table = table
        self._embedder = embedder
        self._cipher = cipher
        self._clock = clock
        self._cap = version_cap
        self._rate = agent_writes_per_hour
        self._secrets = _Secrets()
        self._counter: ThreadPoolExecutor | None = None
        self._bumps: list[Future[None]] = []

    # -- read counts, off the critical path ------------------------------------------------------------

    def _count_read(self, workspace_id: str, entry_id: str) -> None:
        """Bump the head's `readCount`/`lastReadAt` on a background thread: the read answers without waiting
        for it, and a failed bump is dropped (counts are advisory). In Lambda a bump still pending when the
        invocation returns runs when the environment thaws for the next one, or is lost with it."""
        if self._counter is None:
            self._counter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="entry-reads")
        change = CountEntryRead(workspace_id, entry_id, iso(self._clock.now()))
        self._bumps = [f for f in self._bumps if not f.done()]
        self._bumps.append(self._counter.submit(self._bump, change))

    def _bump(self, change: CountEntryRead) -> None:
        # forgotten meanwhile, or the store is busy: the count is advisory
        with contextlib.suppress(TransactionCancelled, DomainError):
            self._table.transact([change])

    def flush_read_counts(self) -> None:
        """Wait for the pending read-count bumps (tests; a graceful shutdown)."""
        for future in self._bumps:
            future.result()
        self._bumps = []

    # -- the key secret --------------------------------------------------------------------------------

    def _secret(self, workspace_id: str) -> bytes:
        """The workspace's HMAC secret: read (and cached) or made at first use, sealed under the branch key."""
        cached = self._secrets.get(workspace_id)
        if cached is not None:
            return cached
        item = self._table.get(*keys.entry_secret(workspace_id))
        if item is None:
            fresh = secrets.token_bytes(32)
            sealed = seal(self._cipher, fresh.hex(), secret_context(workspace_id))
            made: Item = {**keys.as_key(keys.entry_secret(workspace_id)), "ciphertext": sealed.ciphertext}
            try:
                self._table.transact([Create(made, Label.ENTRY_KEY)])
                item = made
            except TransactionCancelled:  # another process made it first: use theirs
                item = self._table.get(*keys.entry_secret(workspace_id))
                if item is None:
                    raise Conflict("the entry key secret changed concurrently; try again") from None
        secret = bytes.fromhex(unseal(self._cipher, item["ciphertext"], secret_context(workspace_id)))
        self._secrets.put(workspace_id, secret)
        return secret

    def _key_slot(self, workspace_id: str, scope: str, owner: str, key: str) -> str:
        return _hmac(self._secret(workspace_id), "slot", scope, owner, key)

    def _key_lookup(self, workspace_id: str, key: str) -> str:
        return _hmac(self._secret(workspace_id), "key", key)

    # -- reads -----------------------------------------------------------------------------------------

    def _open(self, workspace_id: str, item: Item) -> EntryText:
        context = entry_context(workspace_id, item["entryId"], int(item["revision"]))
        return EntryText.parse(unseal(self._cipher, item["ciphertext"], context, item.get("sha256")))

    def _head(self, caller: Caller, head: Item | None) -> Item:
        """The head the caller may see (404 otherwise, the same for missing and private)."""
        if head is None or not _visible(head, caller):
            raise EntryNotFound("entry not found")
        return head

    def read(self, user_id: str, workspace_id: str, entry_id: str, as_of: float | None = None) -> EntryView:
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self._head(caller, found)
        if head["status"] == EntryStatus.FORGOTTEN.value:
            raise EntryForgotten("entry was forgotten")
        item = head if as_of is None else self._revision_at(workspace_id, head, as_of)
        text = self._open(workspace_id, item)
        citations = tuple(Citation(s, self._check(caller, s)) for s in text.sources)
        self._count_read(workspace_id, entry_id)
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

    def _revisions(self, workspace_id: str, entry_id: str) -> Iterator[Item]:
        """Every stored revision item of a chain, oldest first (expired ones included: the caller judges)."""
        start_after: str | None = None
        while True:
            page = self._table.query(
                keys.ws(workspace_id),
                keys.entry_revisions_prefix(entry_id),
                limit=100,
                newest_first=False,
                start_after=start_after,
            )
            if not page:
                return
            yield from page
            start_after = page[-1]["sk"]

    def _revision_at(self, workspace_id: str, head: Item, at: float) -> Item:
        if _valid_at(head, at):
            return head
        now = self._clock.now()
        for item in self._revisions(workspace_id, head["entryId"]):
            if not is_expired(item, now) and _valid_at(item, at):
                return item
        raise EntryNotFound("no revision of this entry was valid then")

    def _check(self, caller: Caller, source: Source) -> CitationState:
        """A citation re-checked now: the cited text's SHA-256 against the one recorded."""
        workspace_id = caller.workspace.id
        if source.kind is CitationKind.ENTRY:
            target = self._table.get(*keys.entry(workspace_id, source.ref))
            if target is None or not _visible(target, caller) or target.get("status") != EntryStatus.ACTIVE.value:
                return CitationState.HIDDEN
            cited = self._open(workspace_id, target).body
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
        lookup = None if filters.key is None else self._key_lookup(workspace_id, filters.key)
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
        if not _visible(head, caller):
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
        return _row(item, self._open(caller.workspace.id, item))

    def history(self, user_id: str, workspace_id: str, entry_id: str, limit: int, cursor: str | None) -> Page:
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self._head(caller, found)
        if head["status"] == EntryStatus.FORGOTTEN.value:
            raise EntryForgotten("entry was forgotten")
        prefix = keys.entry_revisions_prefix(entry_id)
        start_after = None if cursor is None else decode_cursor(cursor, prefix)
        items = self._table.query(
            keys.ws(workspace_id), prefix, limit=limit + 1, newest_first=True, start_after=start_after
        )
        next_cursor = encode_cursor(items[limit - 1]["sk"]) if len(items) > limit else None
        now = self._clock.now()
        rows = [_row(i, self._open(workspace_id, i)) for i in items[:limit] if not is_expired(i, now)]
        return Page(rows, next_cursor)

    # -- writes ----------------------------------------------------------------------------------------

    def create(self, user_id: str, workspace_id: str, draft: Draft) -> Written:
        """A new chain; a key already in use in the scope supersedes that chain instead (docs/architecture.md#keys)."""
        validate(draft)
        caller, _ = load_caller(self._table, workspace_id, user_id)
        return self._create(caller, draft, Author(user_id), redaction_warnings(draft), [])

    def _owner_of(self, caller: Caller, draft: Draft) -> str:
        if draft.scope is EntryScope.MEMBER:
            return caller.user_id
        if draft.scope is EntryScope.AGENT:
            return draft.agent or DEFAULT_AGENT
        return WORKSPACE_OWNER

    def _right(self, caller: Caller, scope: str, owner: str) -> Change:
        """Member entries: that member (any role); the others: write right
        (docs/architecture.md#scopes-and-visibility)."""
        if scope == EntryScope.MEMBER.value:
            if owner != caller.user_id:
                raise EntryNotFound("entry not found")
            return MemberExists(caller.workspace.id, caller.user_id)
        caller.require_write()
        return caller.still_writer()

    def create_fenced(
        self,
        caller: Caller,
        draft: Draft,
        author: Author,
        fence: Sequence[Change],
        guard: Callable[[Item], None] | None = None,
    ) -> Written:
        """An agent's write in `auto`: the entry writes and `fence` (the turn's authority re-stated, its write
        right and retention included) in one transaction; a failed fence raises `Fenced`. `guard` sees the head
        of a chain the key would supersede before it is (a rule may need a quote)."""
        validate(draft)
        return self._create(caller, draft, author, (), [], fence=fence, guard=guard)

    def _create(
        self,
        caller: Caller,
        draft: Draft,
        author: Author,
        warnings: tuple[Finding, ...],
        extra: Sequence[Change],
        *,
        fence: Sequence[Change] | None = None,
        guard: Callable[[Item], None] | None = None,
    ) -> Written:
        workspace_id = caller.workspace.id
        owner = self._owner_of(caller, draft)
        rights = _rights(self._right, caller, draft.scope.value, owner, fence)
        key = draft.text.key
        for _ in range(3):
            entry_id = new_id("en")
            now = self._clock.now()
            item = self._revision_item(workspace_id, entry_id, 1, draft, author, now, draft.scope.value, owner)
            changes: list[Change] = [
                Create({**item, **keys.as_key(keys.entry(workspace_id, entry_id)), "status": "active"}, Label.ENTRY),
                Create(item, Label.ENTRY),
                CountEntryVersions(workspace_id, 1, self._cap),
                *rights,
                *self._rate_changes(workspace_id, author, now),
                *extra,
                *(fence or ()),
            ]
            if key is not None:
                slot = self._key_slot(workspace_id, draft.scope.value, owner, key)
                changes.append(
                    Create({**keys.as_key(keys.entry_key(workspace_id, slot)), "entryId": entry_id}, Label.ENTRY_KEY)
                )
            try:
                self._table.transact(changes)
                return Written(entry_id, 1, warnings=warnings)
            except TransactionCancelled as exc:
                if exc.failed() != {Label.ENTRY_KEY}:
                    raise self._refusal(caller, exc, now, None, fenced=fence is not None) from None
            assert key is not None  # only a key slot can fail alone
            holder = self._table.get(*keys.entry_key(workspace_id, slot))
            head = None if holder is None else self._table.get(*keys.entry(workspace_id, holder["entryId"]))
            if head is None or head["status"] != EntryStatus.ACTIVE.value:
                continue  # the holder was forgotten in between: create again
            if guard is not None:
                guard(head)
            try:
                written = self._supersede(caller, head, int(head["revision"]), draft, author, extra, fence=fence)
            except StaleRevision:
                continue
            return replace(written, superseded=True, warnings=warnings)
        raise Conflict("the key kept changing concurrently; try again")

    def supersede(self, user_id: str, workspace_id: str, entry_id: str, draft: Draft, base: int) -> Written:
        """The next revision of a chain, iff its head is still at `base` (`X-Base-Revision`)."""
        validate(draft)
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self._head(caller, found)
        if head["status"] == EntryStatus.FORGOTTEN.value:
            raise EntryForgotten("entry was forgotten")
        written = self._supersede(caller, head, base, draft, Author(user_id), [])
        return replace(written, warnings=redaction_warnings(draft))

    def _supersede(
        self,
        caller: Caller,
        head: Item,
        base: int,
        draft: Draft,
        author: Author,
        extra: Sequence[Change],
        *,
        fence: Sequence[Change] | None = None,
    ) -> Written:
        """Scope, owner and key are the chain's: a revision changes type and text only. With `fence`, the
        fence re-states the write right and the retention (its workspace check carries the days)."""
        workspace_id = caller.workspace.id
        entry_id, scope, owner = head["entryId"], head["scope"], head["scopeOwner"]
        rights = _rights(self._right, caller, scope, owner, fence)
        if int(head["revision"]) != base:
            raise StaleRevision(
                f"base revision {base} is not the current revision", current_revision=int(head["revision"])
            )
        text = replace(draft.text, key=self._open(workspace_id, head).key)
        revision = base + 1
        now = self._clock.now()
        item = self._revision_item(
            workspace_id, entry_id, revision, replace(draft, text=text), author, now, scope, owner
        )
        for name in ("keyLookup", "keySlot"):
            if name in head:
                item[name] = head[name]
        counts: Item = {name: head[name] for name in ("readCount", "lastReadAt") if name in head}
        days = caller.workspace.history_days
        at = item["validFrom"]
        changes: list[Change] = [
            Create(item, Label.ENTRY),
            MoveEntryHead(
                {**item, **counts, **keys.as_key(keys.entry(workspace_id, entry_id)), "status": "active"}, base
            ),
            SupersedeEntryRevision(
                workspace_id, entry_id, base, revision, at, epoch_seconds(at) + days * DAY_SECONDS, draft.reason
            ),
            CountEntryVersions(workspace_id, 1, self._cap),
            *([RetentionIs(workspace_id, days)] if fence is None else []),
            *rights,
            *self._rate_changes(workspace_id, author, now),
            *extra,
            *(fence or ()),
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise self._refusal(caller, exc, now, entry_id, fenced=fence is not None) from None
        return Written(entry_id, revision)

    def _vector(self, text: EntryText) -> SealedVector | None:
        """The revision's search vector, computed once at write time (docs/architecture.md#the-search-engine): search
        never re-embeds it."""
        if self._embedder is None:
            return None
        from workspace_memory.search.engine import embedding_text, pack_vector

        vector = self._embedder.embed([embedding_text(text.title, text.summary, text.body)])[0]
        return SealedVector(self._embedder.model_id, pack_vector(vector))

    def _revision_item(
        self,
        workspace_id: str,
        entry_id: str,
        revision: int,
        draft: Draft,
        author: Author,
        now: float,
        scope: str,
        owner: str,
    ) -> Item:
        sealed = seal(
            self._cipher,
            draft.text.plaintext(self._vector(draft.text)),
            entry_context(workspace_id, entry_id, revision),
        )
        item: Item = {
            **keys.as_key(keys.entry_revision(workspace_id, entry_id, revision)),
            "entryId": entry_id,
            "revision": revision,
            "previousRevision": revision - 1,
            "scope": scope,
            "scopeOwner": owner,
            "type": draft.type.value,
            "status": EntryStatus.ACTIVE.value,
            "ciphertext": sealed.ciphertext,
            "sha256": sealed.sha256,
            "validFrom": iso(now),
            "author": author.user_id,
            "authorKind": author.kind,
        }
        if author.admission_id is not None:
            item["admissionId"] = author.admission_id
        key = draft.text.key
        if key is not None:
            item["keyLookup"] = self._key_lookup(workspace_id, key)
            item["keySlot"] = self._key_slot(workspace_id, scope, owner, key)
        return item

    def _rate_changes(self, workspace_id: str, author: Author, now: float) -> list[Change]:
        if not author.rated:
            return []
        bucket = int(now // HOUR)
        return [CountAgentWrite(workspace_id, author.user_id, bucket, self._rate, (bucket + 2) * HOUR)]

    def _refusal(
        self, caller: Caller, refusal: TransactionCancelled, now: float, entry_id: str | None, *, fenced: bool = False
    ) -> Exception:
        workspace_id, failed = caller.workspace.id, refusal.failed()
        if fenced and failed & FENCE_LABELS:
            return Fenced(failed & FENCE_LABELS)
        if Label.ACCESS in failed:
            try:
                load_caller(self._table, workspace_id, caller.user_id)
            except WorkspaceNotFound as exc:
                return exc
            return Forbidden("write access to this workspace's memory is not granted to your role")
        if Label.RATE in failed:
            retry = math.ceil((int(now // HOUR) + 1) * HOUR - now)
            return RateLimited(f"at most {self._rate} agent writes per hour", retry_after=max(retry, 1))
        if Label.ENTRY_CAP in failed:
            return EntryCap(f"the workspace holds {self._cap} entry versions, its cap", limit=self._cap)
        if Label.CANDIDATE in failed:
            return Conflict("the candidate was decided or changed concurrently")
        if Label.RETENTION in failed:
            return Conflict("the workspace's retention changed concurrently; try again")
        if entry_id is not None and (stale := stale_entry(refusal, workspace_id, entry_id)) is not None:
            return stale  # the head as the transaction judged it, not a read after it
        return Conflict("the entry changed concurrently; try again")

    # -- forget ----------------------------------------------------------------------------------------

    def forget(self, user_id: str, workspace_id: str, entry_id: str) -> None:
        """Every revision of the chain deleted, its key freed, a text-free tombstone left. Idempotent."""
        caller, (found,) = load_caller(self._table, workspace_id, user_id, [keys.entry(workspace_id, entry_id)])
        head = self._head(caller, found)
        right = self._right(caller, head["scope"], head["scopeOwner"])
        self._forget(caller, head, right)

    def forget_member(self, user_id: str, workspace_id: str, member_id: str) -> int:
        """The owner forgets all of one member's private entries without reading them (nothing is decrypted)."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        caller.require_owner()
        count = 0
        for head in self._heads(workspace_id):
            if head["scope"] == EntryScope.MEMBER.value and head["scopeOwner"] == member_id:
                if head["status"] == EntryStatus.ACTIVE.value:
                    count += 1
                self._forget(caller, head, caller.still_owner())
        return count

    def _heads(self, workspace_id: str) -> Iterator[Item]:
        start_after: str | None = None
        while True:
            page = self._table.query(
                keys.ws(workspace_id), keys.ENTRY_PREFIX, limit=100, newest_first=False, start_after=start_after
            )
            if not page:
                return
            yield from page
            start_after = page[-1]["sk"]

    def _forget(self, caller: Caller, head: Item, right: Change, *, decision: Sequence[Change] = ()) -> None:
        """The one way every forget goes (DELETE, the owner's forget of a member's entries, an accepted forget
        proposal): the chain's revisions deleted, and then, once any of that landed, the search snapshot, which
        may hold the forgotten text (sealed), dropped too, even if a later batch fails.

        With `decision` (an accepted forget proposal) the first transaction carries it and nothing is retried:
        a head that moved from the revision read fails it, and the refusal says how."""
        landed: list[bool] = []
        try:
            self._forget_chain(caller, head, right, decision, landed)
        finally:
            if landed:
                search_snapshot.drop(self._table, caller.workspace.id)

    def _forget_chain(
        self, caller: Caller, head: Item, right: Change, decision: Sequence[Change], landed: list[bool]
    ) -> None:
        workspace_id, entry_id = caller.workspace.id, head["entryId"]
        for _ in range(3):
            revisions = [
                keys.entry_revision(workspace_id, entry_id, int(i["revision"]))
                for i in self._revisions(workspace_id, entry_id)
            ]
            first, rest = revisions[:FORGET_BATCH], revisions[FORGET_BATCH:]
            changes: list[Change] = [right, *decision, *(Delete(k) for k in first)]
            if first:
                changes.append(CountEntryVersions(workspace_id, -len(first), self._cap))
            if head["status"] == EntryStatus.ACTIVE.value:
                tombstone: Item = {
                    **keys.as_key(keys.entry(workspace_id, entry_id)),
                    "entryId": entry_id,
                    "revision": int(head["revision"]),
                    "scope": head["scope"],
                    "scopeOwner": head["scopeOwner"],
                    "status": EntryStatus.FORGOTTEN.value,
                    "forgottenAt": iso(self._clock.now()),
                    "forgottenBy": caller.user_id,
                }
                changes.append(MoveEntryHead(tombstone, int(head["revision"])))
                if "keySlot" in head:
                    changes.append(Delete(keys.entry_key(workspace_id, head["keySlot"])))
            try:
                self._table.transact(changes)
            except TransactionCancelled as exc:
                if decision or Label.ACCESS in exc.failed():  # a lost write right is answered before the entry
                    raise self._refusal(caller, exc, self._clock.now(), entry_id) from None
                fresh = self._table.get(*keys.entry(workspace_id, entry_id))
                if fresh is None:
                    raise EntryNotFound("entry not found") from None
                head = fresh
                continue
            landed.append(True)
            for start in range(0, len(rest), FORGET_BATCH):
                batch = rest[start : start + FORGET_BATCH]
                self._table.transact(
                    [right, *(Delete(k) for k in batch), CountEntryVersions(workspace_id, -len(batch), self._cap)]
                )
            return
        raise Conflict("the entry kept changing while it was forgotten; try again")

    # -- candidates ------------------------------------------------------------------------------------

    def propose(
        self,
        user_id: str,
        workspace_id: str,
        draft: Draft,
        *,
        admission_id: str | None = None,
        entry_id: str | None = None,
        base_revision: int | None = None,
        fence: Sequence[Change] | None = None,
    ) -> str:
        """An agent's entry write in `read_only`: a candidate, redacted, rate limited, for a human to decide.
        With `fence` (the turn's authority re-stated, without the write right) in the same transaction; a failed
        fence raises `Fenced`."""
        validate(draft)
        draft, _ = redacted(draft)
        caller, _ = load_caller(self._table, workspace_id, user_id)
        now = self._clock.now()
        candidate_id = new_id("ec")
        scope, owner = draft.scope.value, self._owner_of(caller, draft)
        payload = {
            "type": draft.type.value,
            "scope": scope,
            "agent": draft.agent,
            "reason": draft.reason,
            "text": json.loads(draft.text.plaintext()),
        }
        sealed = seal(
            self._cipher, json.dumps(payload, ensure_ascii=False), candidate_context(workspace_id, candidate_id)
        )
        item: Item = {
            **keys.as_key(keys.entry_candidate(workspace_id, candidate_id)),
            "candidateId": candidate_id,
            "revision": 1,
            "status": CandidateStatus.PENDING.value,
            "scope": scope,
            "scopeOwner": owner,
            "type": draft.type.value,
            "ciphertext": sealed.ciphertext,
            "proposedBy": user_id,
            "createdAt": iso(now),
            "ttl": int(now) + CANDIDATE_TTL_SECONDS,
        }
        if admission_id is not None:
            item["admissionId"] = admission_id
        if entry_id is not None:
            item["entryId"] = entry_id
            item["baseRevision"] = base_revision or 0
        author = Author(user_id, "agent", admission_id, rated=True)
        changes: list[Change] = [
            Create(item, Label.CANDIDATE),
            MemberExists(workspace_id, user_id),
            *self._rate_changes(workspace_id, author, now),
            *(fence or ()),
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise self._refusal(caller, exc, now, None, fenced=fence is not None) from None
        return candidate_id

    def propose_forget(
        self, caller: Caller, entry_id: str, admission_id: str, fence: Sequence[Change], *, member_check: bool
    ) -> str:
        """An agent's `forget_memory`: a candidate of kind `forget` naming the chain and the revision the agent
        saw (its head now), holding no text, rate limited like any agent write, with `fence` (the turn's authority
        re-stated) in the same transaction; a failed fence raises `Fenced`. An entry the agent's user may not see
        is not found, as a missing one; `member_check` adds the user's membership when the fence does not state
        the write right (a transaction touches the member item once)."""
        workspace_id, user_id = caller.workspace.id, caller.user_id
        head = self._head(caller, self._table.get(*keys.entry(workspace_id, entry_id)))
        if head["status"] != EntryStatus.ACTIVE.value:
            raise EntryForgotten("entry was forgotten")
        now = self._clock.now()
        candidate_id = new_id("ec")
        item: Item = {
            **keys.as_key(keys.entry_candidate(workspace_id, candidate_id)),
            "candidateId": candidate_id,
            "kind": CandidateKind.FORGET.value,
            "revision": 1,
            "status": CandidateStatus.PENDING.value,
            "scope": head["scope"],
            "scopeOwner": head["scopeOwner"],
            "type": head["type"],
            "entryId": entry_id,
            "baseRevision": int(head["revision"]),
            "proposedBy": user_id,
            "admissionId": admission_id,
            "createdAt": iso(now),
            "ttl": int(now) + CANDIDATE_TTL_SECONDS,
        }
        changes: list[Change] = [
            Create(item, Label.CANDIDATE),
            *([MemberExists(workspace_id, user_id)] if member_check else []),
            *self._rate_changes(workspace_id, Author(user_id, "agent", admission_id, rated=True), now),
            *fence,
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled as exc:
            raise self._refusal(caller, exc, now, None, fenced=True) from None
        return candidate_id

    def _candidate_visible(self, caller: Caller, item: Item) -> bool:
        if item["scope"] == EntryScope.MEMBER.value:
            return bool(item["scopeOwner"] == caller.user_id)
        return caller.can_write

    def _open_candidate(self, workspace_id: str, item: Item) -> tuple[Draft, dict[str, Any]]:
        raw = json.loads(unseal(self._cipher, item["ciphertext"], candidate_context(workspace_id, item["candidateId"])))
        text = EntryText.parse(json.dumps(raw["text"]))
        draft = Draft(EntryType(raw["type"]), text, EntryScope(raw["scope"]), raw.get("agent"), raw.get("reason"))
        return draft, raw

    def candidates(
        self, user_id: str, workspace_id: str, limit: int, cursor: str | None
    ) -> tuple[list[CandidateView], str | None]:
        caller, _ = load_caller(self._table, workspace_id, user_id)
        start_after = None if cursor is None else decode_cursor(cursor, keys.CANDIDATE_PREFIX)
        now = self._clock.now()
        views: list[CandidateView] = []
        last: str | None = None
        while len(views) < limit:
            page = self._table.query(
                keys.ws(workspace_id), keys.CANDIDATE_PREFIX, limit=100, newest_first=False, start_after=start_after
            )
            if not page:
                return views, None
            for item in page:
                start_after = item["sk"]
                if item["status"] != CandidateStatus.PENDING.value or is_expired(item, now):
                    continue
                if not self._candidate_visible(caller, item):
                    continue
                views.append(self._candidate_view(workspace_id, item))
                last = item["sk"]
                if len(views) == limit:
                    break
        more = self._table.query(
            keys.ws(workspace_id), keys.CANDIDATE_PREFIX, limit=1, newest_first=False, start_after=last
        )
        return views, encode_cursor(last) if more and last is not None else None

    def _candidate_view(self, workspace_id: str, item: Item) -> CandidateView:
        kind = CandidateKind(item.get("kind", CandidateKind.SAVE.value))
        if kind is CandidateKind.FORGET:
            seen = self._seen_text(workspace_id, item["entryId"], int(item["baseRevision"]))
            scope, type_ = EntryScope(item["scope"]), EntryType(item["type"])
            title, summary = (None, None) if seen is None else (seen.title, seen.summary)
        else:
            draft, _ = self._open_candidate(workspace_id, item)
            scope, type_, title, summary = draft.scope, draft.type, draft.text.title, draft.text.summary
        return CandidateView(
            candidate_id=item["candidateId"],
            revision=int(item["revision"]),
            status=CandidateStatus(item["status"]),
            scope=scope,
            type=type_,
            title=title,
            summary=summary,
            entry_id=item.get("entryId"),
            base_revision=item.get("baseRevision"),
            proposed_by=item["proposedBy"],
            created_at=item["createdAt"],
            kind=kind,
        )

    def _seen_text(self, workspace_id: str, entry_id: str, revision: int) -> EntryText | None:
        """The text of the revision a forget proposal names, for the person deciding it (the candidate holds
        none): None once that revision is gone (forgotten, or expired after its supersession)."""
        item = self._table.get(*keys.entry_revision(workspace_id, entry_id, revision))
        if item is None or is_expired(item, self._clock.now()):
            return None
        return self._open(workspace_id, item)

    def _pending(self, caller: Caller, revision: int, found: Item | None) -> Item:
        if found is None or is_expired(found, self._clock.now()) or not self._candidate_visible(caller, found):
            raise CandidateNotFound("candidate not found")
        if found["status"] != CandidateStatus.PENDING.value or int(found["revision"]) != revision:
            raise StaleRevision("the candidate was decided or changed", current_revision=int(found["revision"]))
        return found

    def _decided(self, item: Item, status: CandidateStatus, by: str) -> ReplaceRevision:
        """The candidate's decision: its text dropped (a decided candidate keeps none), compare-and-set."""
        decided = {k: v for k, v in item.items() if k != "ciphertext"}
        decided.update(
            status=status.value, revision=int(item["revision"]) + 1, decidedBy=by, decidedAt=iso(self._clock.now())
        )
        return ReplaceRevision(decided, int(item["revision"]), Label.CANDIDATE)

    def accept(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> Written:
        """The candidate becomes an entry (or the next revision of its chain) through the same writes."""
        caller, (found,) = load_caller(
            self._table, workspace_id, user_id, [keys.entry_candidate(workspace_id, candidate_id)]
        )
        item = self._pending(caller, revision, found)
        decision = [self._decided(item, CandidateStatus.ACCEPTED, user_id)]
        if item.get("kind") == CandidateKind.FORGET.value:
            return self._accept_forget(caller, item, decision)
        draft, _ = self._open_candidate(workspace_id, item)
        author = Author(item["proposedBy"], "agent", item.get("admissionId"))
        target = item.get("entryId")
        if target is None:
            return self._create(caller, draft, author, (), decision)
        head = self._head(caller, self._table.get(*keys.entry(workspace_id, target)))
        if head["status"] != EntryStatus.ACTIVE.value:
            raise EntryForgotten("entry was forgotten")
        return self._supersede(caller, head, int(item["baseRevision"]), draft, author, decision)

    def _accept_forget(self, caller: Caller, item: Item, decision: Sequence[Change]) -> Written:
        """Forget the chain exactly as `DELETE …/entries/{id}` does, iff its head is still the revision the
        proposal saw (compare-and-set, also inside the first transaction): one that moved on or was forgotten
        meanwhile answers `STALE_REVISION` / `ENTRY_FORGOTTEN` and changes nothing, the candidate included."""
        workspace_id, entry_id, seen = caller.workspace.id, item["entryId"], int(item["baseRevision"])
        head = self._head(caller, self._table.get(*keys.entry(workspace_id, entry_id)))
        if head["status"] != EntryStatus.ACTIVE.value:
            raise EntryForgotten("entry was forgotten")
        if int(head["revision"]) != seen:
            raise StaleRevision(
                f"the entry moved on from revision {seen}, which the proposal named",
                current_revision=int(head["revision"]),
            )
        self._forget(caller, head, self._right(caller, head["scope"], head["scopeOwner"]), decision=decision)
        return Written(entry_id, seen, forgotten=True)

    def reject(self, user_id: str, workspace_id: str, candidate_id: str, revision: int) -> None:
        caller, (found,) = load_caller(
            self._table, workspace_id, user_id, [keys.entry_candidate(workspace_id, candidate_id)]
        )
        item = self._pending(caller, revision, found)
        right = self._right(caller, item["scope"], item["scopeOwner"])
        try:
            self._table.transact([self._decided(item, CandidateStatus.REJECTED, user_id), right])
        except TransactionCancelled as exc:
            raise self._refusal(caller, exc, self._clock.now(), None) from None
