"""The entries context's model: what a writer asks for, what a reader is shown, and the sealed text.

An entry's text (key, title, summary, body, sources, and its search vector) is sealed as one JSON document
under the workspace's branch key, bound to the encryption context of its revision (`entry_context`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workspace_memory.governance.redaction import Finding
from workspace_memory.kernel.clock import DAY_SECONDS, epoch_seconds
from workspace_memory.kernel.terms import (
    CandidateKind,
    CandidateStatus,
    CitationKind,
    CitationState,
    ConsolidationRule,
    EntryScope,
    EntryStatus,
    EntryType,
)

if TYPE_CHECKING:
    from workspace_memory.entries.candidate_diff import CandidateDiff


def entry_context(workspace_id: str, entry_id: str, revision: int) -> dict[str, str]:
    return {"workspace": workspace_id, "kind": "entry", "entry": entry_id, "revision": str(revision)}


def secret_context(workspace_id: str) -> dict[str, str]:
    return {"workspace": workspace_id, "kind": "entry-key-secret"}


def candidate_context(workspace_id: str, candidate_id: str) -> dict[str, str]:
    return {"workspace": workspace_id, "kind": "entry-candidate", "candidate": candidate_id}


@dataclass(frozen=True)
class Source:
    """A citation: what is cited (`entry` id or `document-version` number), the SHA-256 (hex) of the cited
    text when it was cited (an entry's body, a document version's content), and where in it (free text)."""

    kind: CitationKind
    ref: str
    sha256: str
    locator: str = ""

    def wire(self) -> dict[str, str]:
        return {"kind": self.kind.value, "ref": self.ref, "sha256": self.sha256, "locator": self.locator}

    @classmethod
    def of(cls, raw: dict[str, str]) -> Source:
        return cls(CitationKind(raw["kind"]), raw["ref"], raw["sha256"], raw.get("locator", ""))


@dataclass(frozen=True)
class SealedVector:
    """An entry's search vector as stored: the model that made it and the packed float16 values."""

    model: str
    packed: str

    @classmethod
    def of(cls, text: str) -> SealedVector | None:
        vector = json.loads(text).get("vector")
        return None if vector is None else cls(vector["model"], vector["f16"])


@dataclass(frozen=True, order=True)
class PossibleConflict:
    """A live entry a write may contradict (decisions/0087): its id and current revision, never its text."""

    entry_id: str
    revision: int

    @property
    def cited(self) -> str:
        """As a candidate stores it in clear (`en_…@3`, the form of a cited entry)."""
        return f"{self.entry_id}@{self.revision}"

    @classmethod
    def parse(cls, cited: str) -> PossibleConflict:
        entry_id, revision = cited.split("@")
        return cls(entry_id, int(revision))


@dataclass(frozen=True)
class Previously:
    """What the revision a new one superseded said, and until when: one hop, so a replaced statement is never
    asserted alone but read as a dated note on the one that replaced it (seed 001)."""

    summary: str
    until: str
    """When it stopped being the current statement (RFC 3339): the new revision's `validFrom`."""

    def wire(self) -> dict[str, str]:
        """As sealed with its revision and in the search snapshot."""
        return {"summary": self.summary, "until": self.until}

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Previously:
        return cls(str(raw["summary"]), str(raw["until"]))


PREVIOUSLY_MAX_CHARS = 160
"""How much of the replaced summary the note keeps: the index line stays one line, its budget the index's."""


@dataclass(frozen=True)
class EntryText:
    """The sealed part of a revision: everything a person wrote."""

    title: str
    summary: str
    body: str
    sources: tuple[Source, ...] = ()
    key: str | None = None
    reason: str | None = None
    """Why this revision superseded its predecessor (served as the predecessor's `supersededReason`): sealed
    here, never an attribute of its own (decisions/0055)."""
    previously: Previously | None = None
    """The predecessor's summary and when it was replaced (sealed here too; a first revision has none)."""

    def plaintext(self, vector: SealedVector | None = None) -> str:
        """The sealed JSON; the search vector, when there is one, is sealed with the text it was made from."""
        payload: dict[str, Any] = {
            "key": self.key,
            "title": self.title,
            "summary": self.summary,
            "body": self.body,
            "sources": [s.wire() for s in self.sources],
        }
        if vector is not None:
            payload["vector"] = {"model": vector.model, "f16": vector.packed}
        if self.reason is not None:
            payload["reason"] = self.reason
        if self.previously is not None:
            payload["previously"] = self.previously.wire()
        return json.dumps(payload, ensure_ascii=False)

    @classmethod
    def parse(cls, text: str) -> EntryText:
        raw = json.loads(text)
        sources = tuple(Source.of(s) for s in raw.get("sources", []))
        before = raw.get("previously")
        previously = None if before is None else Previously.of(before)
        return cls(raw["title"], raw["summary"], raw["body"], sources, raw.get("key"), raw.get("reason"), previously)


@dataclass(frozen=True)
class Draft:
    """What a writer asks for: a new chain (`scope`, `key`, `agent` apply) or its next revision."""

    type: EntryType
    text: EntryText
    scope: EntryScope = EntryScope.WORKSPACE
    agent: str | None = None
    """The agent persona of an `agent` entry (default `default`)."""
    reason: str | None = None
    """Why a revision supersedes its predecessor (sealed in the new revision's text)."""
    vector: SealedVector | None = None
    """The text's search vector when the contradiction check already made it: the write seals that one."""


AGENT_AUTHOR = "agent"
"""The `authorKind` of a revision a turn's agent wrote (or a person accepted from its candidate)."""


def agent_expiry(valid_from: str, agent_days: int) -> int:
    """When an active agent memory written at `valid_from` ends unless renewed (DynamoDB's `ttl`, epoch seconds)."""
    return epoch_seconds(valid_from) + agent_days * DAY_SECONDS


@dataclass(frozen=True)
class Author:
    user_id: str
    kind: str = "human"
    """`human` (a route) or `agent` (a turn, with its admission): agent writes are rate limited."""
    admission_id: str | None = None
    rated: bool = False
    """Counted against the agent write rate (an agent's own write; not a human accepting its candidate)."""


@dataclass(frozen=True)
class Citation:
    source: Source
    state: CitationState


@dataclass(frozen=True)
class EntryView:
    entry_id: str
    revision: int
    scope: EntryScope
    type: EntryType
    status: EntryStatus
    text: EntryText
    valid_from: str
    valid_to: str | None
    author: str
    author_kind: str
    superseded_by: int | None = None
    superseded_by_entry: str | None = None
    """The chain a person's accepted consolidation proposal retired this one into."""
    superseded_reason: str | None = None
    citations: tuple[Citation, ...] = ()
    reads: int = 0
    """How often the chain was read (advisory, counted off the read's path; this read not yet included)."""
    last_read_at: str | None = None
    pinned: bool = False
    """The chain's pin (agents may read it, never write over it)."""
    verified_at: str | None = None
    verified_by: str | None = None
    verified_evidence: int | None = None
    """Who confirmed this revision still holds, and when (the current revision only)."""


@dataclass(frozen=True)
class EntryRow:
    """One line of a list or history: no body, no sources (a forgotten chain: no text at all)."""

    entry_id: str
    revision: int
    scope: EntryScope
    type: EntryType | None
    status: EntryStatus
    title: str | None
    summary: str | None
    valid_from: str | None
    valid_to: str | None
    author: str | None
    superseded_reason: str | None = None
    reads: int | None = None
    """A list line's chain read count and last read (None on history lines: counts are the chain's)."""
    last_read_at: str | None = None
    size_bytes: int | None = None
    """The UTF-8 bytes of the line's title, summary and body: what reading it in full costs a context."""
    pinned: bool | None = None
    """A list line's chain pin and its current revision's verification (None on history lines)."""
    verified_at: str | None = None
    verified_by: str | None = None
    verified_evidence: int | None = None
    source_state: CitationState | None = None
    """A list line's citations judged now: `ok` or `changed` (a hidden one is not listed); None when the
    revision cites nothing, and on history lines."""


@dataclass(frozen=True)
class Marked:
    """An entry head's marks after a pin, an unpin or a verification: ids and marks, no text."""

    entry_id: str
    revision: int
    pinned: bool
    verified_at: str | None
    verified_by: str | None
    verified_evidence: int | None = None


@dataclass(frozen=True)
class Page:
    rows: list[EntryRow]
    next_cursor: str | None
    hidden: int | None = None
    """A list page: how many matching entries it left out because a cited source is gone or not visible to the
    caller (docs/decisions/0078); None on history pages."""


@dataclass(frozen=True)
class Written:
    entry_id: str
    revision: int
    superseded: bool = False
    """True when a create named a key already in use and superseded that chain (docs/architecture.md#keys)."""
    warnings: tuple[Finding, ...] = ()
    forgotten: bool = False
    """True when an accepted forget proposal forgot the chain (`revision`: the one it was forgotten at)."""
    possible_conflicts: tuple[PossibleConflict, ...] | None = None
    """What the contradiction check found (decisions/0087); None: the write was not checked (an accepted
    candidate: the person deciding it saw its own)."""


@dataclass(frozen=True)
class Evidence:
    """What a consolidation proposal read and the rule it applied: the chain kept (at the revision read), the
    run that proposed it. Ids and rule names only."""

    keeper_id: str
    keeper_revision: int
    rule: ConsolidationRule
    run_id: str | None


@dataclass(frozen=True)
class CandidateView:
    candidate_id: str
    revision: int
    status: CandidateStatus
    scope: EntryScope
    type: EntryType
    title: str | None
    """A forget proposal's: the title of the revision it names, read live (None once that revision is gone)."""
    summary: str | None
    entry_id: str | None
    base_revision: int | None
    proposed_by: str
    created_at: str
    kind: CandidateKind = CandidateKind.SAVE
    body: str | None = None
    """A save candidate's proposed body (None for a forget proposal)."""
    key: str | None = None
    sources: tuple[Source, ...] = ()
    diff: CandidateDiff | None = None
    """A save candidate that supersedes a chain: the revision it would replace and what changes."""
    evidence: Evidence | None = None
    """A consolidation proposal's (`merge`, `supersede`): what it read and by which rule."""
    possible_conflicts: tuple[PossibleConflict, ...] = ()
    """The live entries the agent's write may contradict, as they were when it was held (decisions/0087)."""


@dataclass(frozen=True)
class Filters:
    scope: EntryScope | None = None
    type: EntryType | None = None
    status: EntryStatus = EntryStatus.ACTIVE
    key: str | None = None
    as_of: float | None = None
