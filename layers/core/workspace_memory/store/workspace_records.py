"""Workspace items as the workspaces context reads and writes them (docs/data-model.md): the workspace
(`META`), a member (`MEMBER#{user}`), a key session (`KEYSESSION#{id}`) and its revocation (`KEYREVOKED#{id}`),
and what a conversation's owner item (`CONV#{conv}` `OWNER`) says to whom it answers.

Each record spells its own attribute names (`from_item`, `to_item`); the domain never does. What a condition
says of them stays in `store/changes` and its adapters. An optional attribute that is not set is not stored
at all (no nulls). `workspace_queries` reads them."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.kernel.terms import EntryScope, EntryType, Role, Scope, ShareType
from workspace_memory.store import keys
from workspace_memory.store.changes import DEFAULT_AGENT_DAYS, DEFAULT_HISTORY_DAYS
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import optional_bytes, present


@dataclass(frozen=True)
class Workspace:
    """A workspace's settings. `deleted_at`/`deleted_by` are its tombstone (deletion requested)."""

    id: str
    owner_id: str
    share_type: ShareType
    ai_enabled: bool
    consent_revision: int
    history_days: int = DEFAULT_HISTORY_DAYS
    """How long a version is kept after it stopped being the head (docs/architecture.md#retention; absent = the
    default)."""
    agent_days: int = DEFAULT_AGENT_DAYS
    """How long an active agent-authored entry lives without a new revision (docs/architecture.md#retention;
    absent = the default)."""
    name_sealed: bytes | None = None
    """The name its owner gave it, sealed (workspaces/workspace_names.py): never in clear."""
    created_at: str = ""
    branch_key_id: str | None = None
    deleted_at: str | None = None
    deleted_by: str | None = None
    importing_id: str | None = None
    """The import filling the workspace from an archive (decisions/0069): closed to everything else meanwhile."""

    @classmethod
    def of(cls, item: Item | None) -> Workspace | None:
        return None if item is None else cls.from_item(item)

    @classmethod
    def from_item(cls, item: Item) -> Workspace:
        return cls(
            id=item["workspaceId"],
            owner_id=item["ownerId"],
            share_type=ShareType(item["shareType"]),
            ai_enabled=bool(item.get("aiEnabled", False)),
            consent_revision=int(item.get("consentRevision", 0)),
            history_days=int(item.get("historyDays", DEFAULT_HISTORY_DAYS)),
            agent_days=int(item.get("agentDays", DEFAULT_AGENT_DAYS)),
            name_sealed=optional_bytes(item.get("nameCiphertext")),
            created_at=str(item.get("createdAt", "")),
            branch_key_id=item.get("branchKeyId"),
            deleted_at=item.get("deletedAt"),
            deleted_by=item.get("deletedBy"),
            importing_id=item.get("importingId"),
        )

    def to_item(self) -> Item:
        return {
            **keys.as_key(keys.meta(self.id)),
            **present(
                {
                    "workspaceId": self.id,
                    "branchKeyId": self.branch_key_id,
                    "nameCiphertext": self.name_sealed,
                    "ownerId": self.owner_id,
                    "shareType": self.share_type.value,
                    "aiEnabled": self.ai_enabled,
                    "consentRevision": self.consent_revision,
                    "historyDays": self.history_days,
                    "agentDays": None if self.agent_days == DEFAULT_AGENT_DAYS else self.agent_days,
                    "createdAt": self.created_at,
                    "deletedAt": self.deleted_at,
                    "deletedBy": self.deleted_by,
                }
            ),
        }

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    def writer_roles(self) -> tuple[Role, ...]:
        return (Role.OWNER, Role.EDITOR) if self.share_type is ShareType.SHARED else (Role.OWNER,)


def is_deleted(meta: Item) -> bool:
    """A tombstoned workspace item (deletion requested): it answers every route as a missing one does."""
    return "deletedAt" in meta


def is_importing(meta: Item) -> bool:
    """A workspace being filled from an archive (decisions/0069): closed to every route but the import's."""
    return "importingId" in meta


def history_days_of(meta: Item | None) -> int:
    """The retention a workspace item says (missing item or attribute: the default)."""
    return DEFAULT_HISTORY_DAYS if meta is None else int(meta.get("historyDays", DEFAULT_HISTORY_DAYS))


@dataclass(frozen=True)
class MemberRecord:
    """A membership. `can_write` is the role judged against the (immutable) share type when the membership is
    written, so a write can check it alone (`MemberCanWrite`)."""

    user_id: str
    role: Role
    can_write: bool
    updated_at: str | None = None

    @classmethod
    def of(cls, item: Item | None) -> MemberRecord | None:
        return None if item is None else cls.from_item(item)

    @classmethod
    def from_item(cls, item: Item) -> MemberRecord:
        return cls(
            user_id=item["userId"],
            role=Role(item["role"]),
            can_write=bool(item.get("canWrite", False)),
            updated_at=item.get("updatedAt"),
        )

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.member(workspace_id, self.user_id)),
            **present(
                {
                    "userId": self.user_id,
                    "role": self.role.value,
                    "canWrite": self.can_write,
                    "updatedAt": self.updated_at,
                }
            ),
        }


@dataclass(frozen=True)
class KeySessionRecord:
    """A key session. `scopes` None: the item predates scopes (it grants all). `ttl` lets the row linger past
    `expires_at` (epoch seconds), so late fences still see it expired."""

    key_session_id: str
    opened_by: str
    expires_at: int
    ttl: int
    scopes: frozenset[Scope] | None = None
    bind_scopes: frozenset[EntryScope] | None = None
    """The entry scopes the session is bound to (docs/decisions/0077); None: not bound by scope."""
    bind_types: frozenset[EntryType] | None = None
    bind_prefixes: bytes | None = None
    """The key prefixes it is bound to, sealed (`workspaces/key_binding.py`); None: not bound by key."""

    @classmethod
    def of(cls, item: Item | None) -> KeySessionRecord | None:
        return None if item is None else cls.from_item(item)

    @classmethod
    def from_item(cls, item: Item) -> KeySessionRecord:
        scopes = item.get("scopes")
        bind_scopes = item.get("bindScopes")
        bind_types = item.get("bindTypes")
        return cls(
            key_session_id=item["keySessionId"],
            opened_by=item["openedBy"],
            expires_at=int(item["expiresAt"]),
            ttl=int(item["ttl"]),
            scopes=None if scopes is None else frozenset(Scope(value) for value in scopes),
            bind_scopes=None if bind_scopes is None else frozenset(EntryScope(value) for value in bind_scopes),
            bind_types=None if bind_types is None else frozenset(EntryType(value) for value in bind_types),
            bind_prefixes=optional_bytes(item.get("bindKeyPrefixes")),
        )

    @property
    def bound(self) -> bool:
        return self.bind_scopes is not None or self.bind_types is not None or self.bind_prefixes is not None

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.key_session(workspace_id, self.key_session_id)),
            **present(
                {
                    "keySessionId": self.key_session_id,
                    "openedBy": self.opened_by,
                    "scopes": None if self.scopes is None else sorted(scope.value for scope in self.scopes),
                    "bindScopes": None if self.bind_scopes is None else sorted(s.value for s in self.bind_scopes),
                    "bindTypes": None if self.bind_types is None else sorted(t.value for t in self.bind_types),
                    "bindKeyPrefixes": self.bind_prefixes,
                    "expiresAt": self.expires_at,
                    "ttl": self.ttl,
                }
            ),
        }

    def expired(self, now: float) -> bool:
        """Past its `ttl`: gone, whether or not DynamoDB's TTL deleter has removed it yet."""
        return self.ttl <= now


@dataclass(frozen=True)
class KeyRevocationRecord:
    """A key session's revocation: durable (no TTL), so a revoked session never comes back to life."""

    key_session_id: str
    revoked_by: str
    revoked_at: str

    @classmethod
    def from_item(cls, item: Item) -> KeyRevocationRecord:
        return cls(item["keySessionId"], item["revokedBy"], item["revokedAt"])

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.key_revocation(workspace_id, self.key_session_id)),
            "keySessionId": self.key_session_id,
            "revokedBy": self.revoked_by,
            "revokedAt": self.revoked_at,
        }


@dataclass(frozen=True)
class OwnerOf:
    """To whom a conversation answers, as its owner item says (the turns context writes the item)."""

    workspace_id: str
    user_id: str

    @classmethod
    def of(cls, item: Item | None) -> OwnerOf | None:
        return None if item is None else cls(item["workspaceId"], item["userId"])
