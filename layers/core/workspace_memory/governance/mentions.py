"""Where a workspace's stored text mentions someone (docs/architecture.md#erasing-a-member): before or after
erasing a member, the owner asks which document versions and entry revisions still name them (their name,
their e-mail), to purge or forget what they decide to. The words asked for are personal data: they come in a
request body, are matched in memory, and are never stored, logged or answered back; only ids are returned."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from workspace_memory.document.versions import document_context
from workspace_memory.entries.model import EntryText, entry_context
from workspace_memory.entries.scopes import visible
from workspace_memory.kernel.clock import Clock
from workspace_memory.kernel.sealed import unseal
from workspace_memory.store import document_queries, entry_queries
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.workspaces.access import load_caller

MAX_SCANNED = 2000
"""Versions and revisions decrypted per call; past it the answer says `complete: false`."""
_SPACE = re.compile(r"\s+")


def normalized(text: str) -> str:
    """Compared as people read it: compatibility forms folded (full-width, no-break spaces), case folded,
    runs of white space one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@dataclass(frozen=True)
class Mentions:
    versions: tuple[int, ...]
    entries: tuple[tuple[str, int], ...]
    """(entry id, revision) of each stored revision that mentions a term."""
    scanned: int
    complete: bool


class MentionSearch:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock

    def find(self, user_id: str, workspace_id: str, terms: Sequence[str]) -> Mentions:
        """The owner's search of every stored document version and every entry revision they may see (another
        member's private entries are that member's: an erasure deletes them anyway)."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        caller.require_owner()
        wanted = [normalized(term) for term in terms]
        now, scanned = self._clock.now(), 0
        versions: list[int] = []
        for version in document_queries.versions(self._table, workspace_id):
            if version.ciphertext is None or (version.ttl is not None and version.ttl <= now):
                continue
            if scanned == MAX_SCANNED:
                return Mentions(tuple(versions), (), scanned, False)
            scanned += 1
            text = unseal(self._cipher, version.ciphertext, document_context(workspace_id, version.version))
            if _mentions(text, wanted):
                versions.append(version.version)
        entries: list[tuple[str, int]] = []
        for record in entry_queries.all_revisions(self._table, workspace_id):
            if not visible(record, caller) or (record.ttl is not None and record.ttl <= now):
                continue
            if scanned == MAX_SCANNED:
                return Mentions(tuple(versions), tuple(entries), scanned, False)
            scanned += 1
            context = entry_context(workspace_id, record.entry_id, record.revision)
            opened = EntryText.parse(unseal(self._cipher, record.ciphertext, context, record.sha256))
            fields = [opened.title, opened.summary, opened.body, opened.key or "", opened.reason or ""]
            fields += [source.locator for source in opened.sources]
            if _mentions("\n".join(fields), wanted):
                entries.append((record.entry_id, record.revision))
        return Mentions(tuple(versions), tuple(entries), scanned, True)


def _mentions(text: str, wanted: Sequence[str]) -> bool:
    found = normalized(text)
    return any(term in found for term in wanted)
