"""Citations judged (docs/architecture.md#citations, docs/decisions/0078): one judgement for a single read, the
list, recall and search, so a citation is `ok`, `changed` or `hidden` the same wherever the entry is seen.

What exists is read every time, never cached: the cited entries' heads and the cited document versions, 100 keys
per consistent read, for a whole page or recall at once (a gone, forgotten, expired, purged or private source is
knowable from its item, without decrypting). Whether the cited text still hashes the same is the SHA-256 of the
cited plaintext (an entry's body, a document version's content), which nothing stores in clear (decisions/0055):
it is computed once per cited revision or version and kept by the process (`CitedDigests`), keyed by what makes
it immutable (the revision or version and the SHA-256 of its ciphertext), so a warm list or recall decrypts no
cited text at all and a cold one each cited text once."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from workspace_memory.document.versions import document_context
from workspace_memory.entries.bound import admits_head
from workspace_memory.entries.model import EntryText, Source, entry_context
from workspace_memory.entries.scopes import visible_to
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import CitationKind, CitationState
from workspace_memory.store.citation_queries import Cited, cited
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.workspaces.key_binding import KeyBinding

DIGEST_CACHE_SIZE = 20_000
"""Cited texts' digests one process keeps (64 hex digits and a key each: about 3 MB when full)."""

_WORST = {CitationState.OK: 0, CitationState.CHANGED: 1, CitationState.HIDDEN: 2}


class CitedDigests:
    """A warm process's SHA-256 of each cited text it has decrypted, keyed by (workspace, kind, id, revision or
    version, ciphertext digest): a revision's text and a version's text never change, so a digest never goes
    stale; a newer revision is a new key. Bounded, least recently used out. Digests only, never text."""

    def __init__(self, size: int = DIGEST_CACHE_SIZE) -> None:
        self._size = size
        self._digests: dict[tuple[str, str, str, int, str], str] = {}
        self.computed = 0
        """How many digests this cache had to decrypt for (the tests' and the bench's count)."""

    def get(self, key: tuple[str, str, str, int, str]) -> str | None:
        digest = self._digests.pop(key, None)
        if digest is not None:
            self._digests[key] = digest  # most recently used last
        return digest

    def put(self, key: tuple[str, str, str, int, str], digest: str) -> None:
        if len(self._digests) >= self._size:
            del self._digests[next(iter(self._digests))]
        self._digests[key] = digest
        self.computed += 1


def overall(states: Sequence[CitationState]) -> CitationState | None:
    """An entry's state from its citations': hidden if any is, else changed if any is, else ok; None: no citation."""
    return max(states, key=_WORST.__getitem__) if states else None


def _version_number(ref: str) -> int | None:
    return int(ref) if ref.isascii() and ref.isdigit() and len(ref) <= 12 else None


class Citations:
    def __init__(self, table: Table, cipher: Cipher, digests: CitedDigests | None = None) -> None:
        self._table = table
        self._cipher = cipher
        self.digests = digests if digests is not None else CitedDigests()

    def judge(
        self,
        workspace_id: str,
        user_id: str,
        cited_by: Sequence[Sequence[Source]],
        now: float,
        within: KeyBinding | None = None,
    ) -> list[list[CitationState]]:
        """Each source of each entry judged for `user_id` at `now` (and, under a bound key session, `within` its
        context: a cited entry outside it is hidden): the cited items of all of them read together (no read when
        none cites anything), a cited text decrypted only when its digest is not known yet."""
        entry_ids = sorted({s.ref for sources in cited_by for s in sources if s.kind is CitationKind.ENTRY})
        numbers = {_version_number(s.ref) for sources in cited_by for s in sources if s.kind is not CitationKind.ENTRY}
        versions = sorted(n for n in numbers if n is not None)
        found = cited(self._table, workspace_id, entry_ids, versions) if entry_ids or versions else Cited({}, {})
        return [[self._state(workspace_id, user_id, s, found, now, within) for s in sources] for sources in cited_by]

    def judge_entries(
        self, workspace_id: str, user_id: str, cited_by: Sequence[Sequence[Source]], now: float
    ) -> list[CitationState | None]:
        """`judge`, one state per entry (`overall`)."""
        return [overall(states) for states in self.judge(workspace_id, user_id, cited_by, now)]

    def _state(
        self, workspace_id: str, user_id: str, source: Source, found: Cited, now: float, within: KeyBinding | None
    ) -> CitationState:
        if source.kind is CitationKind.ENTRY:
            head = found.entries.get(source.ref)
            if not isinstance(head, EntryRecord) or not visible_to(head, user_id) or head.expired(now):
                return CitationState.HIDDEN  # none, forgotten (a tombstone), a member's private one, past its ttl
            if within is not None and not admits_head(within, self._cipher, workspace_id, head):
                return CitationState.HIDDEN  # outside the bound key session's context
            digest = self._entry_digest(workspace_id, head)
        else:
            number = _version_number(source.ref)
            version = None if number is None else found.versions.get(number)
            if number is None or version is None or version.expired(now) or version.ciphertext is None:
                return CitationState.HIDDEN  # none, past its retention, purged to a stub
            digest = self._version_digest(workspace_id, number, version.sha256, version.ciphertext)
        return CitationState.OK if hmac.compare_digest(digest, source.sha256) else CitationState.CHANGED

    def _version_digest(self, workspace_id: str, number: int, sealed_sha256: str, ciphertext: bytes) -> str:
        key = (workspace_id, CitationKind.DOCUMENT_VERSION.value, "", number, sealed_sha256)
        known = self.digests.get(key)
        if known is not None:
            return known
        text = unseal(self._cipher, ciphertext, document_context(workspace_id, number))
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self.digests.put(key, digest)
        return digest

    def _entry_digest(self, workspace_id: str, head: EntryRecord) -> str:
        key = (workspace_id, CitationKind.ENTRY.value, head.entry_id, head.revision, head.sha256 or "")
        digest = self.digests.get(key)
        if digest is None:
            context = entry_context(workspace_id, head.entry_id, head.revision)
            body = EntryText.parse(unseal(self._cipher, head.ciphertext, context, head.sha256)).body
            digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
            self.digests.put(key, digest)
        return digest
