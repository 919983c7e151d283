"""Automation (the agent runtime's routes): admissions, recall, capture, agent entry writes, working notes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from workspace_memory.api.models.base import (
    FindingOut,
    OutModel,
    PossibleConflictOut,
    Untrusted,
    conflicts_out,
    findings_out,
    omitted_when_none,
)
from workspace_memory.kernel.terms import MemoryWrite, Mode, Outcome, Predicate, RecallStatus

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.entries.agent_results import SaveResult
    from workspace_memory.turns.admission import Admitted
    from workspace_memory.turns.capture import CaptureResult, Proposal
    from workspace_memory.turns.notes import Notes
    from workspace_memory.turns.recall import Recall


class AdmissionOut(OutModel):
    admission_id: str
    credential: str
    expires_at: str
    mode: Mode

    @classmethod
    def of(cls, admitted: Admitted) -> AdmissionOut:
        adm = admitted.admission
        return cls(admission_id=adm.id, credential=admitted.credential, expires_at=adm.expires_at_iso, mode=adm.mode)


class RecallOut(Untrusted):
    """The memory block for one model call, as the agent's runtime is handed it (untrusted, never evidence)."""

    status: RecallStatus
    revision: int | None
    block: str
    memory_write: MemoryWrite

    @classmethod
    def of(cls, recall: Recall) -> RecallOut:
        return cls.model_validate(recall, from_attributes=True)


class ProposalOut(OutModel):
    """A read-only or conflicting capture's edits, to apply as they are (`POST …/memory/proposals/apply`)."""

    edits: list[dict[str, Any]]
    base_version: int
    clear_generation: int

    @classmethod
    def of(cls, proposal: Proposal) -> ProposalOut:
        return cls.model_validate(proposal, from_attributes=True)


class ReceiptOut(OutModel):
    """A committed capture's receipt: ids, sizes and hashes, never text."""

    admission_id: str
    version: int
    ciphertext_sha256: str
    bytes: int
    committed_at: str


class CaptureOut(OutModel):
    outcome: Outcome
    version: int | None = omitted_when_none()
    predicate: Predicate | None = omitted_when_none()
    proposal: ProposalOut | None = omitted_when_none()
    receipt: ReceiptOut | None = omitted_when_none()
    replayed: bool = Field(default=False, exclude_if=lambda replayed: not replayed)
    """Sent (as `true`) only when the answer is the stored receipt of an earlier, identical capture."""
    current: bool | None = omitted_when_none()
    """Sent with `replayed` only: whether the replayed capture's version is still the document's current one
    (`false` once a later Save, capture, Clear or Undo moved the head)."""
    redactions: list[FindingOut] | None = omitted_when_none()
    """What was redacted from the edits' text before it was stored or proposed."""

    @classmethod
    def of(cls, result: CaptureResult) -> CaptureOut:
        return cls(
            outcome=result.outcome,
            version=result.version,
            predicate=result.predicate,
            proposal=None if result.proposal is None else ProposalOut.of(result.proposal),
            receipt=None if result.receipt is None else ReceiptOut.model_validate(result.receipt, from_attributes=True),
            replayed=result.replayed,
            current=result.current,
            redactions=findings_out(result.redactions),
        )


class EntrySaveOut(OutModel):
    """What an agent's entry write came to (`PUT /v1/automation/workspaces/{ws}/entries`): ids, never text."""

    outcome: Outcome
    entry_id: str | None = omitted_when_none()
    revision: int | None = omitted_when_none()
    candidate_id: str | None = omitted_when_none()
    """`proposal` (read_only): the candidate a member accepts or rejects."""
    superseded: bool = Field(default=False, exclude_if=lambda superseded: not superseded)
    predicate: Predicate | None = omitted_when_none()
    replayed: bool = Field(default=False, exclude_if=lambda replayed: not replayed)
    redactions: list[FindingOut] | None = omitted_when_none()
    possible_conflicts: list[PossibleConflictOut] = []
    """The live entries the save may contradict (ids and revisions; empty: none). With any, an `auto` save is
    held as a `proposal` (`candidateId`) for a member to decide instead of being written."""

    @classmethod
    def of(cls, result: SaveResult) -> EntrySaveOut:
        return cls(
            outcome=result.outcome,
            entry_id=result.entry_id,
            revision=result.revision,
            candidate_id=result.candidate_id,
            superseded=result.superseded,
            predicate=result.predicate,
            replayed=result.replayed,
            redactions=findings_out(result.redactions),
            possible_conflicts=conflicts_out(result.possible_conflicts),
        )


class ForgetProposalOut(OutModel):
    """What an agent's `forget_memory` came to (`POST /v1/automation/workspaces/{ws}/entries/{entryId}/forget`):
    a proposal (`candidateId`, for a member to accept or reject), `noop` (off) or `refused`; ids, never text."""

    outcome: Outcome
    entry_id: str | None = omitted_when_none()
    candidate_id: str | None = omitted_when_none()
    predicate: Predicate | None = omitted_when_none()
    replayed: bool = Field(default=False, exclude_if=lambda replayed: not replayed)

    @classmethod
    def of(cls, result: SaveResult) -> ForgetProposalOut:
        return cls(
            outcome=result.outcome,
            entry_id=result.entry_id,
            candidate_id=result.candidate_id,
            predicate=result.predicate,
            replayed=result.replayed,
        )


class VerificationOut(OutModel):
    """What an agent's `verify_memory` came to (`POST /v1/automation/workspaces/{ws}/entries/{entryId}/verify`):
    `committed` (the head now says `verifiedBy` the admission's user, `verifiedEvidence` its count), `noop` (off)
    or `refused` with the predicate (`read_only` is `policy`); ids, never text."""

    outcome: Outcome
    entry_id: str | None = omitted_when_none()
    revision: int | None = omitted_when_none()
    predicate: Predicate | None = omitted_when_none()

    @classmethod
    def of(cls, result: SaveResult) -> VerificationOut:
        return cls(
            outcome=result.outcome, entry_id=result.entry_id, revision=result.revision, predicate=result.predicate
        )


class NotesMetaOut(OutModel):
    """What a notes write or clear answers: the stored revision, never the text."""

    revision: int
    bytes: int
    updated_at: str | None
    redactions: list[FindingOut] | None = omitted_when_none()
    """What was redacted from the notes before they were stored."""

    @classmethod
    def of(cls, notes: Notes) -> NotesMetaOut:
        return cls(
            revision=notes.revision,
            bytes=notes.bytes,
            updated_at=notes.updated_at,
            redactions=findings_out(notes.redactions),
        )


class NotesOut(NotesMetaOut):
    notes: str

    @classmethod
    def with_text(cls, notes: Notes) -> NotesOut:
        return cls(revision=notes.revision, bytes=notes.bytes, updated_at=notes.updated_at, notes=notes.text)
