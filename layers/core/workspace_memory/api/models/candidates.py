"""The review inbox's candidates (docs/architecture.md#entries): what an agent proposed and, for a save over a
chain, what accepting it would change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel, PossibleConflictOut, conflicts_out
from workspace_memory.kernel.terms import (
    CandidateKind,
    CandidateStatus,
    CitationKind,
    ConsolidationRule,
    EntryScope,
    EntryType,
)

if TYPE_CHECKING:  # the domain object the models are built `of`: not imported at a handler's cold start
    from workspace_memory.entries.model import CandidateView


class SourceOut(OutModel):
    kind: CitationKind
    ref: str
    sha256: str
    locator: str


class CandidateDiffOut(OutModel):
    """What accepting a save candidate supersedes: revision `revision` of chain `entryId` (its text as it is
    stored), the fields the candidate changes, and a unified diff of the body (decision 0053)."""

    entry_id: str
    revision: int
    current: bool
    """False once the chain moved on from `revision`: accepting then answers 409 `STALE_REVISION`."""
    type: EntryType
    title: str
    summary: str
    body: str
    changed: list[str]
    """Of `type`, `title`, `summary`, `body`, `sources`."""
    body_diff: str
    """Python `difflib.unified_diff` of the body's lines (`{entryId}@{revision}` → `candidate`); empty if equal."""


class EvidenceOut(OutModel):
    """What a consolidation proposal read: chain `entryId` at `baseRevision` goes into `keeperId` at
    `keeperRevision`, by `rule`, proposed by run `runId` (decision 0086)."""

    keeper_id: str
    keeper_revision: int
    rule: ConsolidationRule
    run_id: str | None


class CandidateOut(OutModel):
    candidate_id: str
    revision: int
    status: CandidateStatus
    kind: CandidateKind
    """`save`: an entry write (its proposed fields); `forget`: forgetting the chain `entryId` at `baseRevision`."""
    scope: EntryScope
    type: EntryType
    title: str | None
    """A forget proposal's: that of the revision it names, read live (null once that revision is gone)."""
    summary: str | None
    entry_id: str | None
    """The chain accepting would supersede (by id, or the one the key named when the candidate was made)."""
    base_revision: int | None
    proposed_by: str
    created_at: str
    body: str | None
    """A save candidate's proposed body, as accepting would store it; null for a forget proposal."""
    key: str | None
    sources: list[SourceOut]
    diff: CandidateDiffOut | None
    """A save candidate that supersedes a chain, while the revision it names is readable; else null."""
    evidence: EvidenceOut | None = None
    """A consolidation proposal's (`merge`, `supersede`): what it read and the rule it applied; else null."""
    possible_conflicts: list[PossibleConflictOut]
    """The live entries the agent's write may contradict, as when it was held (ids and revisions; empty: none):
    an `auto` write with any is held here instead of being written (decisions/0087)."""

    @classmethod
    def of(cls, view: CandidateView) -> CandidateOut:
        diff = view.diff
        return cls(
            candidate_id=view.candidate_id,
            revision=view.revision,
            status=view.status,
            kind=view.kind,
            scope=view.scope,
            type=view.type,
            title=view.title,
            summary=view.summary,
            entry_id=view.entry_id,
            base_revision=view.base_revision,
            proposed_by=view.proposed_by,
            created_at=view.created_at,
            body=view.body,
            key=view.key,
            sources=[SourceOut.model_validate(s, from_attributes=True) for s in view.sources],
            diff=None
            if diff is None
            else CandidateDiffOut(
                entry_id=diff.entry_id,
                revision=diff.revision,
                current=diff.current,
                type=diff.type,
                title=diff.title,
                summary=diff.summary,
                body=diff.body,
                changed=list(diff.changed),
                body_diff=diff.body_diff,
            ),
            evidence=None if view.evidence is None else EvidenceOut.model_validate(view.evidence, from_attributes=True),
            possible_conflicts=conflicts_out(view.possible_conflicts),
        )


class CandidatesOut(OutModel):
    candidates: list[CandidateOut]
    next_cursor: str | None
