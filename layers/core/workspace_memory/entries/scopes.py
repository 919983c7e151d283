"""Scopes and visibility (docs/architecture.md#scopes-and-visibility): who owns a chain of each scope, who sees
it, and which right a write of it needs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from workspace_memory.entries.model import Draft
from workspace_memory.kernel.errors import EntryNotFound
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.store.changes import Change, MemberExists
from workspace_memory.workspaces.access import Caller

WORKSPACE_OWNER = "-"
"""The scope owner of `workspace` entries (member entries: the member's user id; agent entries: the agent)."""
DEFAULT_AGENT = "default"


class Scoped(Protocol):
    """A head, a revision or a candidate: whatever has a scope and its owner."""

    @property
    def scope(self) -> EntryScope: ...

    @property
    def scope_owner(self) -> str: ...


def owner_of(caller: Caller, draft: Draft) -> str:
    if draft.scope is EntryScope.MEMBER:
        return caller.user_id
    if draft.scope is EntryScope.AGENT:
        return draft.agent or DEFAULT_AGENT
    return WORKSPACE_OWNER


def visible(record: Scoped, caller: Caller) -> bool:
    """Member entries are their member's alone; workspace and agent entries every member reads."""
    return visible_to(record, caller.user_id)


def visible_to(record: Scoped, user_id: str) -> bool:
    """`visible` for a member known by id (recall knows the admission's user, not a loaded caller)."""
    return record.scope is not EntryScope.MEMBER or record.scope_owner == user_id


def candidate_visible(caller: Caller, candidate: Scoped) -> bool:
    """A member's own candidates; the others, to whoever may write them (who decides them)."""
    if candidate.scope is EntryScope.MEMBER:
        return candidate.scope_owner == caller.user_id
    return caller.can_write


def write_right(caller: Caller, scope: EntryScope, owner: str) -> Change:
    """Member entries: that member (any role); the others: write right
    (docs/architecture.md#scopes-and-visibility)."""
    if scope is EntryScope.MEMBER:
        if owner != caller.user_id:
            raise EntryNotFound("entry not found")
        return MemberExists(caller.workspace.id, caller.user_id)
    caller.require_write()
    return caller.still_writer()


def rights(caller: Caller, scope: EntryScope, owner: str, fence: Sequence[Change] | None) -> list[Change]:
    """The writer's right as a check of its own, unless a fence re-states it (one check per item)."""
    return [write_right(caller, scope, owner)] if fence is None else []
