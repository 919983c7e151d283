"""The labels every change carries, and the changes of no one context: create, put or delete one item."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store import keys
from workspace_memory.store.ports import Item


class Label:
    """Stable names for what a change stands for; several changes may share one (both key-session checks)."""

    VERSION = "version"
    HEAD = "head"
    ACCESS = "access"
    CLEAR_GENERATION = "clear_generation"
    POLICY = "policy"
    CONSENT = "consent"
    CREDENTIAL = "credential"
    ADMISSION = "admission"
    IDEMPOTENCY = "idempotency"
    OWNER = "owner"
    KEY_SESSION = "key_session"
    WORKSPACE = "workspace"
    NOTES = "notes"
    WRITE = "write"
    RETENTION = "retention"
    ENTRY = "entry"
    ENTRY_KEY = "entry_key"
    PINNED = "pinned"
    SOURCE_FORGOTTEN = "source_forgotten"
    ENTRY_CAP = "entry_cap"
    RATE = "rate"
    CANDIDATE = "candidate"
    KEEPER = "keeper"
    CONSOLIDATION = "consolidation"
    SEARCH_SNAPSHOT = "search_snapshot"
    AUDIT = "audit"
    MEMBER = "member"
    ERASURE = "erasure"
    EXPORT = "export"
    IMPORT = "import"
    IMPORT_TARGET = "import-target"
    CONSOLIDATION = "consolidation"
    CONSOLIDATION_RUN = "consolidation-run"
    PAGE = "page"
    FILING = "filing"
    PAGE_CATEGORIES = "page-categories"


@dataclass(frozen=True)
class ItemWrite:
    """A change that writes one whole item (under some condition)."""

    item: Item

    @property
    def key(self) -> keys.Key:
        return self.item["pk"], self.item["sk"]


@dataclass(frozen=True)
class Create(ItemWrite):
    """Put `item`; fails if an item with its key exists (ids are never reused, versions never rewritten)."""

    label: str


@dataclass(frozen=True)
class Put(ItemWrite):
    """Put `item` unconditionally, as part of the transaction (it stands or falls with the others)."""

    label: str = Label.WRITE


@dataclass(frozen=True)
class Delete:
    """Delete the item at `key` unconditionally, absent or not (the purge of a deleted workspace; forgetting an
    entry's revisions). It never fails, so its label names nothing a cancellation could report."""

    key: keys.Key
    label: str = Label.WRITE
