"""The document's changes: its head, its versions' expiry and purge, and the workspace's retention."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store.changes.base import ItemWrite, Label

DEFAULT_HISTORY_DAYS = 90
"""A workspace's retention when its item names none (docs/architecture.md#retention): non-head versions live 90 days."""

DEFAULT_AGENT_DAYS = 90
"""How long an active agent memory lives without a new revision when the workspace item names no `agentDays`
(docs/architecture.md#retention)."""


@dataclass(frozen=True)
class MoveHead(ItemWrite):
    """Replace the document head by `item` iff it is at `base` and not a tombstone (absent iff `base` is 0)."""

    base: int
    label: str = Label.HEAD


@dataclass(frozen=True)
class HeadAt:
    """The document head is still at `version` and not a tombstone."""

    workspace_id: str
    version: int
    label: str = Label.HEAD


@dataclass(frozen=True)
class TombstoneHead:
    """Make the document head a tombstone (created as version 0 if the document was never saved): every
    `MoveHead` fails from then on, so no Save, Clear, Undo, apply or capture can land."""

    workspace_id: str
    label: str = Label.HEAD


@dataclass(frozen=True)
class ExpireVersion:
    """Give version `version` its expiry: `ttl` (epoch seconds, DynamoDB's TTL attribute) and `supersededAt`,
    iff the version exists and has not already expired at `now` (an expired version is gone for good, even
    before DynamoDB deletes it)."""

    workspace_id: str
    version: int
    ttl: int
    superseded_at: str
    now: int
    label: str = Label.VERSION


@dataclass(frozen=True)
class PurgeVersion:
    """Turn version `version` into a stub: its ciphertext removed, `purgedAt` and `purgedBy` set, iff it
    exists (a version DynamoDB already deleted is never recreated as a stub)."""

    workspace_id: str
    version: int
    at: str
    by: str
    label: str = Label.VERSION


@dataclass(frozen=True)
class RetentionIs:
    """The workspace's `historyDays` is still `history_days` (missing reads as `DEFAULT_HISTORY_DAYS`), so a
    version superseded now expires exactly as the retention in force says; with `agent_days`, its `agentDays`
    too (missing reads as `DEFAULT_AGENT_DAYS`), so an agent memory written now expires as the window says."""

    workspace_id: str
    history_days: int
    agent_days: int | None = None
    label: str = Label.RETENTION


@dataclass(frozen=True)
class SetRetention:
    """Set the workspace's `historyDays` and/or `agentDays`, those given (the workspace must exist). One change
    for both: a transaction may touch the workspace item once."""

    workspace_id: str
    history_days: int | None = None
    agent_days: int | None = None
    label: str = Label.RETENTION
