"""The memory document: its head, versions and history, retention and purge, and what a write commits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from workspace_memory.api.models.base import FindingOut, OutModel, findings_out, omitted_when_none

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.document.commit import Commit
    from workspace_memory.document.purge import Purged
    from workspace_memory.document.retention import Retention
    from workspace_memory.document.service import DocumentView, HistoryPage
    from workspace_memory.document.versions import VersionInfo


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
    agent_days: int
    """How long an active agent memory lives without a new revision (docs/architecture.md#retention)."""

    @classmethod
    def of(cls, retention: Retention) -> RetentionOut:
        return cls(history_days=retention.history_days, agent_days=retention.agent_days)


class PurgeOut(OutModel):
    """The versions a purge turned into stubs (never the line)."""

    purged_versions: list[int]
    count: int

    @classmethod
    def of(cls, purged: Purged) -> PurgeOut:
        return cls(purged_versions=purged.versions, count=len(purged.versions))


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
