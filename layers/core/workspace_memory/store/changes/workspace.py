"""The workspace's changes: a member's right, the owner, the memory policy, AI consent and the tombstone."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store.changes.base import Label


@dataclass(frozen=True)
class MemberCanWrite:
    """The member still has write right when the write lands (false for a non-member). Member items carry
    `canWrite`, derived from role and share type when the membership is written, so the check needs no read
    of the workspace."""

    workspace_id: str
    user_id: str
    label: str = Label.ACCESS


@dataclass(frozen=True)
class MemberIsOwner:
    """The member is still the workspace's owner when the write lands (false for anyone else)."""

    workspace_id: str
    user_id: str
    label: str = Label.ACCESS


@dataclass(frozen=True)
class MemberExists:
    """The user is still a member of the workspace (any role) when the write lands."""

    workspace_id: str
    user_id: str
    label: str = Label.ACCESS


@dataclass(frozen=True)
class TombstoneWorkspace:
    """Mark the workspace deleted iff it exists and is not deleted yet: `deletedAt`/`deletedBy` set, AI off and
    the consent revision bumped, so every admitted turn is retired by the fence it already has."""

    workspace_id: str
    by: str
    at: str
    label: str = Label.WORKSPACE


@dataclass(frozen=True)
class WorkspaceLive:
    """The workspace exists and is not tombstoned when the write lands: a write judged before a deletion and
    landing after its tombstone (or after the purge deleted META) is refused, so nothing recreates an item of
    a deleted workspace (docs/decisions/0056)."""

    workspace_id: str
    label: str = Label.WORKSPACE


@dataclass(frozen=True)
class BumpClearGeneration:
    """The policy half of a Clear: generation `seen` -> `seen + 1`, mode and revision kept (row created if
    absent, as `read_only` revision 0)."""

    workspace_id: str
    seen: int
    label: str = Label.CLEAR_GENERATION


@dataclass(frozen=True)
class ClearGenerationIs:
    """The clear generation is still `generation`; `None` means no policy row exists yet."""

    workspace_id: str
    generation: int | None
    label: str = Label.CLEAR_GENERATION


@dataclass(frozen=True)
class SetPolicyMode:
    """Compare-and-set the mode on the revision (`expected` 0 also matches a missing row); never touches the
    clear generation, which a Clear may bump concurrently."""

    workspace_id: str
    mode: str
    expected: int
    at: str
    by: str
    label: str = Label.POLICY


@dataclass(frozen=True)
class PolicyIs:
    """The policy still has the mode, revision and clear generation a turn was admitted under. Revision 0 is the
    default policy (`read_only`, no row yet): then the row must still be absent."""

    workspace_id: str
    mode: str
    revision: int
    clear_generation: int
    label: str = Label.POLICY


@dataclass(frozen=True)
class ConsentIs:
    """Workspace AI is still on, with the consent revision seen, and (when given) the retention seen - with
    `agent_days`, the agent window too (an agent's write stamps its expiry from it): the fence's one check of the
    workspace item, which a transaction may touch only once. `agent_days` counts only beside `history_days`."""

    workspace_id: str
    consent_revision: int
    history_days: int | None = None
    agent_days: int | None = None
    label: str = Label.CONSENT


@dataclass(frozen=True)
class SetAi:
    """Turn workspace AI on or off iff the consent revision is still `seen`; it becomes `seen + 1`."""

    workspace_id: str
    enabled: bool
    seen: int
    label: str = Label.CONSENT
