"""A turn's changes: its admission, the credential slot, the conversation's owner, the key session, notes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workspace_memory.store.changes.base import ItemWrite, Label


@dataclass(frozen=True)
class CredentialHeldBy:
    """The conversation's credential slot still holds this admission's nonce, unexpired at `now`."""

    conversation_id: str
    admission_id: str
    nonce_hash: str
    now: int
    label: str = Label.CREDENTIAL


@dataclass(frozen=True)
class ConsumeAdmission:
    """Mark the admission committed (with the capture's request hash and receipt) iff it is still admitted,
    unexpired at `now`, admitted in `mode`, and for this workspace and user."""

    admission_id: str
    workspace_id: str
    user_id: str
    mode: str
    now: int
    request_hash: str
    receipt: dict[str, Any]
    label: str = Label.ADMISSION


@dataclass(frozen=True)
class AdmissionLive:
    """The admission is unexpired at `now`, admitted in `mode`, for this workspace and user, and not retired
    otherwise (`admitted`, or `committed` by the turn's one capture): an entry write does not consume it."""

    admission_id: str
    workspace_id: str
    user_id: str
    mode: str
    now: int
    label: str = Label.ADMISSION


@dataclass(frozen=True)
class ClaimConversation(ItemWrite):
    """Write the conversation's owner record iff it is absent or already this workspace's and user's."""

    label: str = Label.OWNER


@dataclass(frozen=True)
class KeySessionLive:
    """The key session exists and is unexpired at `now`."""

    workspace_id: str
    key_session_id: str
    now: int
    label: str = Label.KEY_SESSION


@dataclass(frozen=True)
class KeySessionNotRevoked:
    """No durable revocation row exists for the key session."""

    workspace_id: str
    key_session_id: str
    label: str = Label.KEY_SESSION


@dataclass(frozen=True)
class ReplaceRevision(ItemWrite):
    """Put `item` iff the stored item's `revision` is `expected` (absent iff `expected` is 0)."""

    expected: int
    label: str = Label.NOTES
