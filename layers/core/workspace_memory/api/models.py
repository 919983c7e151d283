"""Response models of the public HTTP API: what every route answers, and the error envelope.

Routes return `Response[Model]`; powertools validates the model and serializes it by alias (camelCase), and
the same declarations will generate the OpenAPI document. A field that is left out of the JSON when absent is
declared so (`omitted_when_none`); every other optional field is sent as `null`. The worker's client parses
the automation routes' answers into these same models. Domain objects carry no wire shape: the `of`
constructors here are the only mapping from them to JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from workspace_memory.terms import (
    CandidateKind,
    CandidateStatus,
    CitationKind,
    CitationState,
    EntryScope,
    EntryStatus,
    EntryType,
    MemoryWrite,
    Mode,
    Outcome,
    Predicate,
    RecallStatus,
    RedactionKind,
    Role,
    Scope,
    ShareType,
)
from workspace_memory.turn_contract import RoundReceipt, ToolOutcome, TurnView

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.access import Caller, MembershipPage, Workspace
    from workspace_memory.admission import Admitted
    from workspace_memory.agent_entries import SaveResult
    from workspace_memory.capture import CaptureResult, Proposal
    from workspace_memory.deletion import DeletionProgress
    from workspace_memory.document import Commit, DocumentView, HistoryPage, VersionInfo
    from workspace_memory.entries import CandidateView, EntryRow, EntryView, Page, Written
    from workspace_memory.entry_search import SearchResult
    from workspace_memory.keysessions import KeySession, KeySessionPage
    from workspace_memory.notes import Notes
    from workspace_memory.policy import Policy
    from workspace_memory.purge import Purged
    from workspace_memory.recall import Recall, ReceiptsPage
    from workspace_memory.redaction import Finding
    from workspace_memory.turns import StartedTurn


class ApiModel(BaseModel):
    """Request models: camelCase on the wire, unknown fields rejected."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class OutModel(BaseModel):
    """Response models: camelCase on the wire; a reader (the worker's client) ignores fields it does not know."""

    model_config = ConfigDict(extra="ignore", alias_generator=to_camel, populate_by_name=True, frozen=True)

    def wire(self) -> dict[str, Any]:
        """The JSON object this model is on the wire: what powertools' serializer makes of it, too."""
        return self.model_dump(mode="json", by_alias=True)


def _is_none(value: object) -> bool:
    return value is None


def omitted_when_none() -> Any:
    """An optional field that is left out of the JSON, rather than sent as `null`, when it has no value."""
    return Field(default=None, exclude_if=_is_none)


# -- workspaces, members, workspace AI, key sessions, health ---------------------------------------------


class HealthOut(OutModel):
    status: Literal["ok"] = "ok"


class WorkspaceCreated(OutModel):
    workspace_id: str


class WorkspaceOut(OutModel):
    """The caller's view of a workspace: its settings and the caller's role. Never memory text."""

    workspace_id: str
    name: str
    share_type: ShareType
    owner_id: str
    role: Role
    can_write: bool
    ai_enabled: bool
    consent_revision: int
    history_days: int
    created_at: str

    @classmethod
    def of(cls, caller: Caller) -> WorkspaceOut:
        ws = caller.workspace
        return cls(
            workspace_id=ws.id,
            name=ws.name,
            share_type=ws.share_type,
            owner_id=ws.owner_id,
            role=caller.role,
            can_write=caller.can_write,
            ai_enabled=ws.ai_enabled,
            consent_revision=ws.consent_revision,
            history_days=ws.history_days,
            created_at=ws.created_at,
        )


class WorkspaceListed(OutModel):
    workspace_id: str
    name: str
    role: Role


class WorkspacesOut(OutModel):
    workspaces: list[WorkspaceListed]
    next_cursor: str | None

    @classmethod
    def of(cls, page: MembershipPage) -> WorkspacesOut:
        return cls(
            workspaces=[
                WorkspaceListed(workspace_id=m.workspace_id, name=m.name, role=m.role) for m in page.workspaces
            ],
            next_cursor=page.next_cursor,
        )


class MemberOut(OutModel):
    user_id: str
    role: Role


class AiOut(OutModel):
    enabled: bool
    consent_revision: int

    @classmethod
    def of(cls, workspace: Workspace) -> AiOut:
        return cls(enabled=workspace.ai_enabled, consent_revision=workspace.consent_revision)


class KeySessionOut(OutModel):
    key_session_id: str
    expires_at: str
    scopes: list[Scope]

    @classmethod
    def of(cls, session: KeySession) -> KeySessionOut:
        return cls(key_session_id=session.id, expires_at=session.expires_at_iso, scopes=sorted(session.scopes))


class ListedKeySessionOut(OutModel):
    key_session_id: str
    scopes: list[Scope]
    expires_at: str
    revoked: bool


class KeySessionsOut(OutModel):
    key_sessions: list[ListedKeySessionOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: KeySessionPage) -> KeySessionsOut:
        return cls(
            key_sessions=[
                ListedKeySessionOut(
                    key_session_id=s.session.id,
                    scopes=sorted(s.session.scopes),
                    expires_at=s.session.expires_at_iso,
                    revoked=s.revoked,
                )
                for s in page.sessions
            ],
            next_cursor=page.next_cursor,
        )


# -- the memory document and its policy -------------------------------------------------------------------


class PolicyOut(OutModel):
    mode: Mode
    policy_revision: int
    clear_generation: int

    @classmethod
    def of(cls, policy: Policy) -> PolicyOut:
        return cls(mode=policy.mode, policy_revision=policy.revision, clear_generation=policy.clear_generation)


class DocumentOut(OutModel):
    version: int
    content: str
    bytes: int
    recall_eligible: bool
    updated_at: str | None
    updated_by: str | None

    @classmethod
    def of(cls, doc: DocumentView) -> DocumentOut:
        return cls.model_validate(doc, from_attributes=True)


class VersionOut(OutModel):
    version: int
    op: Literal["save", "clear", "undo", "capture"]
    author: str
    created_at: str
    bytes: int
    ciphertext_sha256: str
    restored_from: int | None = omitted_when_none()
    purged_at: str | None = omitted_when_none()
    """Set on a stub left by a purge (`POST …/memory/purge`): its text is gone, reading it answers 410."""
    purged_by: str | None = omitted_when_none()
    admission_id: str | None = omitted_when_none()
    """A capture version only: the admission whose fence committed it (ids only, never text)."""
    turn_id: str | None = omitted_when_none()
    """A capture version made by a turn started on `POST …/turns`: that turn (the frame's blame names it)."""

    @classmethod
    def of(cls, info: VersionInfo) -> VersionOut:
        return cls.model_validate(info, from_attributes=True)


class VersionContentOut(VersionOut):
    """One version with its content (after the version's fields)."""

    content: str

    @classmethod
    def with_content(cls, info: VersionInfo, content: str) -> VersionContentOut:
        return cls.model_validate({**VersionOut.of(info).model_dump(), "content": content})


class HistoryOut(OutModel):
    versions: list[VersionOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: HistoryPage) -> HistoryOut:
        return cls(versions=[VersionOut.of(v) for v in page.versions], next_cursor=page.next_cursor)


class RetentionOut(OutModel):
    history_days: int


class PurgeOut(OutModel):
    """The versions a purge turned into stubs (never the line)."""

    purged_versions: list[int]
    count: int

    @classmethod
    def of(cls, purged: Purged) -> PurgeOut:
        return cls(purged_versions=purged.versions, count=len(purged.versions))


class FindingOut(OutModel):
    """How many findings of one kind redaction made (or, for a human's text, would have made): never the text."""

    kind: RedactionKind
    count: int


def findings_out(found: tuple[Finding, ...]) -> list[FindingOut] | None:
    """The findings on the wire; none at all leaves the field out."""
    return [FindingOut(kind=f.kind, count=f.count) for f in found] or None


class CommitOut(OutModel):
    version: int
    op: str
    bytes: int
    ciphertext_sha256: str
    created_at: str
    restored_from: int | None = omitted_when_none()
    clear_generation: int | None = omitted_when_none()
    warnings: list[FindingOut] | None = omitted_when_none()
    """A human's Save is stored as typed; this says what it holds that an agent's text would lose."""

    @classmethod
    def of(cls, commit: Commit) -> CommitOut:
        info = commit.version
        return cls(
            version=info.version,
            op=info.op,
            bytes=info.bytes,
            ciphertext_sha256=info.ciphertext_sha256,
            created_at=info.created_at,
            restored_from=info.restored_from,
            clear_generation=commit.clear_generation,
            warnings=findings_out(commit.warnings),
        )


# -- memory entries (docs/architecture.md#entries) ---------------------------------------------------------------------


class EntryWritten(OutModel):
    entry_id: str
    revision: int
    superseded: bool | None = omitted_when_none()
    """True when a create named a key in use: that chain got the new revision."""
    warnings: list[FindingOut] | None = omitted_when_none()
    forgotten: bool | None = omitted_when_none()
    """True when an accepted forget proposal forgot the chain (`revision`: the one it was forgotten at)."""

    @classmethod
    def of(cls, written: Written) -> EntryWritten:
        return cls(
            entry_id=written.entry_id,
            revision=written.revision,
            superseded=written.superseded or None,
            warnings=findings_out(written.warnings),
            forgotten=written.forgotten or None,
        )


class CitationOut(OutModel):
    kind: CitationKind
    ref: str
    sha256: str
    locator: str
    state: CitationState


class EntryOut(OutModel):
    entry_id: str
    revision: int
    scope: EntryScope
    key: str | None
    type: EntryType
    status: EntryStatus
    title: str
    summary: str
    body: str
    valid_from: str
    valid_to: str | None
    author: str
    author_kind: str
    superseded_by: int | None = omitted_when_none()
    superseded_reason: str | None = omitted_when_none()
    citations: list[CitationOut]

    @classmethod
    def of(cls, view: EntryView) -> EntryOut:
        text = view.text
        return cls(
            entry_id=view.entry_id,
            revision=view.revision,
            scope=view.scope,
            key=text.key,
            type=view.type,
            status=view.status,
            title=text.title,
            summary=text.summary,
            body=text.body,
            valid_from=view.valid_from,
            valid_to=view.valid_to,
            author=view.author,
            author_kind=view.author_kind,
            superseded_by=view.superseded_by,
            superseded_reason=view.superseded_reason,
            citations=[
                CitationOut(
                    kind=c.source.kind,
                    ref=c.source.ref,
                    sha256=c.source.sha256,
                    locator=c.source.locator,
                    state=c.state,
                )
                for c in view.citations
            ],
        )


class EntryRowOut(OutModel):
    """A list or history line; a forgotten chain's tombstone has no type, title or summary."""

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
    superseded_reason: str | None = omitted_when_none()

    @classmethod
    def of(cls, row: EntryRow) -> EntryRowOut:
        return cls.model_validate(row, from_attributes=True)


class EntriesOut(OutModel):
    entries: list[EntryRowOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: Page) -> EntriesOut:
        return cls(entries=[EntryRowOut.of(r) for r in page.rows], next_cursor=page.next_cursor)


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
    base_revision: int | None
    proposed_by: str
    created_at: str

    @classmethod
    def of(cls, view: CandidateView) -> CandidateOut:
        return cls.model_validate(view, from_attributes=True)


class CandidatesOut(OutModel):
    candidates: list[CandidateOut]
    next_cursor: str | None


class SearchResultOut(OutModel):
    """One hit: the revision ranked, its index line, and its fused score (reciprocal rank fusion: higher first)."""

    entry_id: str
    revision: int
    title: str
    summary: str
    score: float

    @classmethod
    def of(cls, result: SearchResult) -> SearchResultOut:
        return cls.model_validate(result, from_attributes=True)


class SearchOut(OutModel):
    """docs/architecture.md#search-routes: `{results: [{entryId, revision, title, summary, score}]}`, best first."""

    results: list[SearchResultOut]

    @classmethod
    def of(cls, results: Sequence[SearchResult]) -> SearchOut:
        return cls(results=[SearchResultOut.of(r) for r in results])


class ForgottenOut(OutModel):
    forgotten: int
    """How many active chains were forgotten."""


# -- conversations: turns and recall receipts ------------------------------------------------------------


class TurnStarted(OutModel):
    turn_id: str
    admission_id: str

    @classmethod
    def of(cls, started: StartedTurn) -> TurnStarted:
        return cls(turn_id=started.turn_id, admission_id=started.admission_id)


class ToolOutcomeOut(OutModel):
    round: int
    tool: str
    ok: bool
    outcome: str
    version: int | None = omitted_when_none()
    predicate: str | None = omitted_when_none()


class RoundReceiptOut(OutModel):
    round: int
    status: RecallStatus
    revision: int | None


class TurnOut(OutModel):
    turn_id: str
    status: Literal["running", "completed", "failed"]
    answer: str | None
    rounds: int
    tool_outcomes: list[ToolOutcomeOut]
    receipts: list[RoundReceiptOut]

    @classmethod
    def of(cls, turn_id: str, view: TurnView) -> TurnOut:
        return cls(
            turn_id=turn_id,
            status=view.status,
            answer=view.answer,
            rounds=view.rounds,
            tool_outcomes=[_tool_outcome(o) for o in view.tool_outcomes],
            receipts=[_round_receipt(r) for r in view.receipts],
        )


def _tool_outcome(outcome: ToolOutcome) -> ToolOutcomeOut:
    return ToolOutcomeOut.model_validate(outcome, from_attributes=True)


def _round_receipt(receipt: RoundReceipt) -> RoundReceiptOut:
    return RoundReceiptOut.model_validate(receipt, from_attributes=True)


class RecallReceiptOut(OutModel):
    admission_id: str
    turn_id: str | None
    at: str
    status: RecallStatus
    revision: int | None
    entries: list[str] | None = omitted_when_none()
    """`entryId@revision` of each entry the recalled index named (left out when none)."""
    selected: list[str] | None = omitted_when_none()
    """`entryId@revision` of each entry selective recall handed the model for the turn's message (left out when
    none)."""

    @field_validator("entries", "selected", mode="before")
    @classmethod
    def _none_when_empty(cls, value: Any) -> Any:
        return list(value) or None if value is not None else None


class ReceiptsOut(OutModel):
    receipts: list[RecallReceiptOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: ReceiptsPage) -> ReceiptsOut:
        return cls(
            receipts=[RecallReceiptOut.model_validate(r, from_attributes=True) for r in page.receipts],
            next_cursor=page.next_cursor,
        )


# -- automation: admissions, recall, capture, working notes ------------------------------------------------


class AdmissionOut(OutModel):
    admission_id: str
    credential: str
    expires_at: str
    mode: Mode

    @classmethod
    def of(cls, admitted: Admitted) -> AdmissionOut:
        adm = admitted.admission
        return cls(admission_id=adm.id, credential=admitted.credential, expires_at=adm.expires_at_iso, mode=adm.mode)


class RecallOut(OutModel):
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
    redactions: list[FindingOut] | None = omitted_when_none()
    """What was redacted from the edits' text before it was stored or proposed."""

    @classmethod
    def of(cls, result: CaptureResult) -> CaptureOut:
        return cls(
            outcome=result.outcome,
            version=result.version,
            predicate=result.predicate,
            proposal=None if result.proposal is None else ProposalOut.of(result.proposal),
            receipt=None if result.receipt is None else ReceiptOut.model_validate(result.receipt),
            replayed=result.replayed,
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


# -- deleting a workspace -----------------------------------------------------------------------------------


class DeletionOut(OutModel):
    """A workspace deletion's progress, for the owner who asked for it (ids, counts and times only)."""

    workspace_id: str
    status: Literal["running", "completed", "failed"]
    phase: str
    items_deleted: int
    branch_key_destroyed: bool
    requested_at: str
    completed_at: str | None

    @classmethod
    def of(cls, progress: DeletionProgress) -> DeletionOut:
        return cls.model_validate(progress, from_attributes=True)


class PurgeBatchOut(OutModel):
    """One purge step (automation, the deletion workflow): how many items went, and whether any are left."""

    deleted: int
    more: bool


class BranchKeyDestroyedOut(OutModel):
    """How many key-store items of the workspace's branch key the call deleted (0 when already gone)."""

    items_deleted: int


# -- the error envelope ------------------------------------------------------------------------------------


class ErrorBody(OutModel):
    code: str
    message: str


class ProblemOut(OutModel):
    """One rejected edit: its index in the request (-1 for the request as a whole) and why."""

    index: int
    reason: str


class ErrorOut(OutModel):
    """`{"error": {code, message}}` and, when the error has them, the public details beside it (built by
    `workspace_memory.api.errors.error_envelope`, the one place that makes an envelope)."""

    error: ErrorBody
    current_version: int | None = omitted_when_none()
    current: PolicyOut | None = omitted_when_none()
    limit: int | None = omitted_when_none()
    predicate: str | None = omitted_when_none()
    problems: list[ProblemOut] | None = omitted_when_none()
    current_revision: int | None = omitted_when_none()
    retry_after: int | None = omitted_when_none()
    """Seconds until a rate-limited caller may write again (also the `Retry-After` header)."""
