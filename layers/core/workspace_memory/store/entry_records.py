"""Entry items as the entries context reads and writes them (docs/data-model.md): a chain's revisions
(`ENTRYREV#{id}#{rev}`) and its head (`ENTRY#{id}`, the current revision's copy, or a tombstone once the chain
is forgotten), candidates (`ENTRYCAND#{id}`), key slots (`ENTRYKEY#{hmac}`) and the key secret (`ENTRYSECRET`).

Each record spells its own attribute names (`from_item`, `to_item`); the domain never does. What a condition
says of them stays in `store/changes.py` and its adapters. An optional attribute that is not set is not
stored at all (no nulls). `entry_queries` reads them."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.kernel.terms import (
    CandidateKind,
    CandidateStatus,
    ConsolidationRule,
    EntryScope,
    EntryStatus,
    EntryType,
    RejectedFor,
)
from workspace_memory.store import keys
from workspace_memory.store.changes.entries import versions_attribute
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import optional_int, present


@dataclass(frozen=True)
class EntryRecord:
    """A revision of a chain, or the head that carries its current revision (and the advisory read counts a
    read bumps). The text is the sealed `ciphertext` (the reason this revision superseded its predecessor
    included); `key_lookup`/`key_slot` are the HMACs of its key."""

    entry_id: str
    revision: int
    scope: EntryScope
    scope_owner: str
    type: EntryType
    status: EntryStatus
    ciphertext: bytes
    sha256: str | None
    valid_from: str
    author: str
    author_kind: str = "human"
    admission_id: str | None = None
    key_lookup: str | None = None
    key_slot: str | None = None
    superseded_at: str | None = None
    superseded_by: int | None = None
    ttl: int | None = None
    read_count: int | None = None
    last_read_at: str | None = None
    pinned: bool = False
    """A person pinned the chain: agents may read it, never write over it (decisions/0064). The head's only."""
    verified_at: str | None = None
    verified_by: str | None = None
    """Who last confirmed the head's revision still holds, and when (the head's only; a new revision has none)."""
    verified_evidence: int | None = None
    """Set when an agent of `verified_by` confirmed it: how many cited sources it re-checked (a person: None)."""
    source_slots: tuple[str, ...] = ()
    """HMACs of what this revision drew on (each cited source; an agent's turn): what forgetting it blocks."""
    superseded_by_entry: str | None = None
    """The chain a person's accepted consolidation proposal retired this one into (its head `superseded`, never
    moving again; docs/decisions/0086)."""

    @classmethod
    def from_item(cls, item: Item) -> EntryRecord:
        return cls(
            entry_id=item["entryId"],
            revision=int(item["revision"]),
            scope=EntryScope(item["scope"]),
            scope_owner=item["scopeOwner"],
            type=EntryType(item["type"]),
            status=EntryStatus(item["status"]),
            ciphertext=item["ciphertext"],
            sha256=item.get("sha256"),
            valid_from=item["validFrom"],
            author=item["author"],
            author_kind=item.get("authorKind", "human"),
            admission_id=item.get("admissionId"),
            key_lookup=item.get("keyLookup"),
            key_slot=item.get("keySlot"),
            superseded_at=item.get("supersededAt"),
            superseded_by=optional_int(item.get("supersededBy")),
            superseded_by_entry=item.get("supersededByEntry"),
            ttl=optional_int(item.get("ttl")),
            read_count=optional_int(item.get("readCount")),
            last_read_at=item.get("lastReadAt"),
            pinned=item.get("pinned") is True,
            verified_at=item.get("verifiedAt"),
            verified_by=item.get("verifiedBy"),
            verified_evidence=optional_int(item.get("verifiedEvidence")),
            source_slots=tuple(item.get("sourceSlots", ())),
        )

    def revision_item(self, workspace_id: str) -> Item:
        """The revision's own item (no read counts, pin or verification: those are the head's)."""
        return {**keys.as_key(keys.entry_revision(workspace_id, self.entry_id, self.revision)), **self._attributes()}

    def head_item(self, workspace_id: str) -> Item:
        """The chain's head at this revision (an unpinned head stores no `pinned`)."""
        marks = present(
            {
                "readCount": self.read_count,
                "lastReadAt": self.last_read_at,
                "pinned": True if self.pinned else None,
                "verifiedAt": self.verified_at,
                "verifiedBy": self.verified_by,
                "verifiedEvidence": self.verified_evidence,
            }
        )
        return {**keys.as_key(keys.entry(workspace_id, self.entry_id)), **self._attributes(), **marks}

    def _attributes(self) -> Item:
        return present(
            {
                "entryId": self.entry_id,
                "revision": self.revision,
                "previousRevision": self.revision - 1,
                "scope": self.scope.value,
                "scopeOwner": self.scope_owner,
                "type": self.type.value,
                "status": self.status.value,
                "ciphertext": self.ciphertext,
                "sha256": self.sha256,
                "validFrom": self.valid_from,
                "author": self.author,
                "authorKind": self.author_kind,
                "admissionId": self.admission_id,
                "keyLookup": self.key_lookup,
                "keySlot": self.key_slot,
                "supersededAt": self.superseded_at,
                "supersededBy": self.superseded_by,
                "ttl": self.ttl,
                "sourceSlots": list(self.source_slots) or None,
                "supersededByEntry": self.superseded_by_entry,
            }
        )

    def expired(self, now: float) -> bool:
        """Past its retention: gone, whether or not DynamoDB's TTL deleter has removed it yet."""
        return self.ttl is not None and self.ttl <= now


@dataclass(frozen=True)
class Tombstone:
    """A forgotten chain's head: no text and no type, only the chain, its last revision, who forgot it when, and
    how many sources and turns its forget blocked (a count: the blocks are items of their own)."""

    entry_id: str
    revision: int
    scope: EntryScope
    scope_owner: str
    forgotten_at: str
    forgotten_by: str
    blocked_sources: int | None = None

    @property
    def status(self) -> EntryStatus:
        return EntryStatus.FORGOTTEN

    @classmethod
    def from_item(cls, item: Item) -> Tombstone:
        return cls(
            entry_id=item["entryId"],
            revision=int(item["revision"]),
            scope=EntryScope(item["scope"]),
            scope_owner=item["scopeOwner"],
            forgotten_at=item["forgottenAt"],
            forgotten_by=item["forgottenBy"],
            blocked_sources=optional_int(item.get("blockedSources")),
        )

    def head_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.entry(workspace_id, self.entry_id)),
            "entryId": self.entry_id,
            "revision": self.revision,
            "scope": self.scope.value,
            "scopeOwner": self.scope_owner,
            "status": EntryStatus.FORGOTTEN.value,
            "forgottenAt": self.forgotten_at,
            "forgottenBy": self.forgotten_by,
            **present({"blockedSources": self.blocked_sources}),
        }


EntryHead = EntryRecord | Tombstone


def head_of(item: Item | None) -> EntryHead | None:
    """A head item read (a tombstone for a forgotten chain), or None where there was none."""
    return None if item is None else head_from_item(item)


def head_from_item(item: Item) -> EntryHead:
    if item["status"] == EntryStatus.FORGOTTEN.value:
        return Tombstone.from_item(item)
    return EntryRecord.from_item(item)


@dataclass(frozen=True)
class CandidateRecord:
    """A candidate: a proposed entry write (sealed, `ciphertext`) or a proposed forget of `entry_id` at
    `base_revision` (no text). A decided candidate keeps no text either."""

    candidate_id: str
    revision: int
    status: CandidateStatus
    scope: EntryScope
    scope_owner: str
    type: EntryType
    proposed_by: str
    created_at: str
    ttl: int
    kind: CandidateKind = CandidateKind.SAVE
    ciphertext: bytes | None = None
    admission_id: str | None = None
    entry_id: str | None = None
    base_revision: int | None = None
    decided_by: str | None = None
    decided_at: str | None = None
    rejected_for: RejectedFor | None = None
    keeper_id: str | None = None
    keeper_revision: int | None = None
    """A consolidation proposal's other chain and the revision it read: the one `entry_id` is retired into."""
    rule: ConsolidationRule | None = None
    run_id: str | None = None
    """The consolidation run that proposed it, and by which rule (the evidence, ids only)."""
    possible_conflicts: tuple[str, ...] = ()
    """What the proposed write may contradict, `entryId@revision` each (ids only, decisions/0087)."""

    @classmethod
    def of(cls, item: Item | None) -> CandidateRecord | None:
        return None if item is None else cls.from_item(item)

    @classmethod
    def from_item(cls, item: Item) -> CandidateRecord:
        return cls(
            candidate_id=item["candidateId"],
            revision=int(item["revision"]),
            status=CandidateStatus(item["status"]),
            scope=EntryScope(item["scope"]),
            scope_owner=item["scopeOwner"],
            type=EntryType(item["type"]),
            proposed_by=item["proposedBy"],
            created_at=item["createdAt"],
            ttl=int(item["ttl"]),
            kind=CandidateKind(item.get("kind", CandidateKind.SAVE.value)),
            ciphertext=item.get("ciphertext"),
            admission_id=item.get("admissionId"),
            entry_id=item.get("entryId"),
            base_revision=optional_int(item.get("baseRevision")),
            decided_by=item.get("decidedBy"),
            decided_at=item.get("decidedAt"),
            rejected_for=None if "rejectedFor" not in item else RejectedFor(item["rejectedFor"]),
            keeper_id=item.get("keeperId"),
            keeper_revision=optional_int(item.get("keeperRevision")),
            rule=None if "rule" not in item else ConsolidationRule(item["rule"]),
            run_id=item.get("runId"),
            possible_conflicts=tuple(item.get("possibleConflicts", ())),
        )

    def to_item(self, workspace_id: str) -> Item:
        """A save candidate's item names no kind (`save` is what an absent one means)."""
        return {
            **keys.as_key(keys.entry_candidate(workspace_id, self.candidate_id)),
            **present(
                {
                    "candidateId": self.candidate_id,
                    "kind": None if self.kind is CandidateKind.SAVE else self.kind.value,
                    "revision": self.revision,
                    "status": self.status.value,
                    "scope": self.scope.value,
                    "scopeOwner": self.scope_owner,
                    "type": self.type.value,
                    "ciphertext": self.ciphertext,
                    "entryId": self.entry_id,
                    "baseRevision": self.base_revision,
                    "proposedBy": self.proposed_by,
                    "admissionId": self.admission_id,
                    "createdAt": self.created_at,
                    "ttl": self.ttl,
                    "decidedBy": self.decided_by,
                    "decidedAt": self.decided_at,
                    "rejectedFor": None if self.rejected_for is None else self.rejected_for.value,
                    "keeperId": self.keeper_id,
                    "keeperRevision": self.keeper_revision,
                    "rule": None if self.rule is None else self.rule.value,
                    "runId": self.run_id,
                    "possibleConflicts": list(self.possible_conflicts) or None,
                }
            ),
        }

    def expired(self, now: float) -> bool:
        return self.ttl <= now


def key_slot_item(workspace_id: str, slot: str, entry_id: str) -> Item:
    """The key slot held by chain `entry_id`."""
    return {**keys.as_key(keys.entry_key(workspace_id, slot)), "entryId": entry_id}


def forgotten_source_item(workspace_id: str, slot: str, entry_id: str, at: str, ttl: int) -> Item:
    """A source (or turn) that forgotten chain `entry_id` drew on, blocked for agents until `ttl`."""
    return {**keys.as_key(keys.forgotten_source(workspace_id, slot)), "entryId": entry_id, "blockedAt": at, "ttl": ttl}


def key_secret_item(workspace_id: str, ciphertext: bytes) -> Item:
    """The workspace's sealed HMAC secret for entry keys."""
    return {**keys.as_key(keys.entry_secret(workspace_id)), "ciphertext": ciphertext}


def entry_counter_item(workspace_id: str, versions: dict[str | None, int]) -> Item:
    """The workspace's entry counter as an import leaves it: the stored versions it wrote, counted as the cap
    counts them (shared ones under None, each member's private ones under that member), and a first
    `entriesRevision`."""
    counts = {versions_attribute(member): count for member, count in versions.items()}
    return {**keys.as_key(keys.entry_counter(workspace_id)), **counts, "entriesRevision": 1}
