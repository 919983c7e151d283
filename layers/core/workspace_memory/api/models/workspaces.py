"""Workspaces, members, workspace AI, key sessions, health."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from workspace_memory.api.models.base import OutModel, omitted_when_none
from workspace_memory.kernel.terms import EntryScope, EntryType, Role, Scope, ShareType

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.workspaces.access import MembershipPage, Workspace, WorkspaceView
    from workspace_memory.workspaces.key_binding import KeyBinding
    from workspace_memory.workspaces.keysessions import KeySession, KeySessionPage


class HealthOut(OutModel):
    status: Literal["ok"] = "ok"


class WorkspaceCreated(OutModel):
    workspace_id: str


class WorkspaceOut(OutModel):
    """The caller's view of a workspace: its name, its settings and the caller's role. Never memory text."""

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
    def of(cls, view: WorkspaceView) -> WorkspaceOut:
        caller = view.caller
        ws = caller.workspace
        return cls(
            workspace_id=ws.id,
            name=view.name,
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


class KeySessionBindOut(OutModel):
    """What a bound session is limited to; a field absent: not bound by it (decisions/0077)."""

    scopes: list[EntryScope] | None = omitted_when_none()
    types: list[EntryType] | None = omitted_when_none()
    key_prefixes: list[str] | None = omitted_when_none()

    @classmethod
    def of(cls, binding: KeyBinding | None) -> KeySessionBindOut | None:
        if binding is None:
            return None
        return cls(
            scopes=None if binding.scopes is None else sorted(binding.scopes),
            types=None if binding.types is None else sorted(binding.types),
            key_prefixes=None if binding.key_prefixes is None else list(binding.key_prefixes),
        )


class KeySessionOut(OutModel):
    key_session_id: str
    expires_at: str
    scopes: list[Scope]
    bind: KeySessionBindOut | None = omitted_when_none()
    """Left out for an unbound session."""

    @classmethod
    def of(cls, session: KeySession) -> KeySessionOut:
        return cls(
            key_session_id=session.id,
            expires_at=session.expires_at_iso,
            scopes=sorted(session.scopes),
            bind=KeySessionBindOut.of(session.binding),
        )


class ListedKeySessionOut(OutModel):
    key_session_id: str
    scopes: list[Scope]
    expires_at: str
    revoked: bool
    bind: KeySessionBindOut | None = omitted_when_none()
    """Left out for an unbound session."""


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
                    bind=KeySessionBindOut.of(s.session.binding),
                )
                for s in page.sessions
            ],
            next_cursor=page.next_cursor,
        )
