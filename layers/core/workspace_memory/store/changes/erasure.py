"""The changes of erasing a member (docs/architecture.md#erasing-a-member): the membership removed, an item's
attributes that name the member rewritten to their pseudonym, the erasure's record completed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workspace_memory.store import keys
from workspace_memory.store.changes.base import ItemWrite, Label


@dataclass(frozen=True)
class RemoveMember:
    """Delete the membership iff it exists and is not the owner's (an owner is never erased: the workspace
    would answer to no one)."""

    workspace_id: str
    user_id: str
    label: str = Label.MEMBER


@dataclass(frozen=True)
class RewriteAttributes:
    """Set each attribute of `after` (None: remove it) iff every attribute of `before` still holds its value:
    an item changed since it was read is left, and read again by the next batch."""

    key: keys.Key
    before: Mapping[str, Any] = field(default_factory=dict)
    after: Mapping[str, Any] = field(default_factory=dict)
    label: str = Label.WRITE


@dataclass(frozen=True)
class CompleteErasure(ItemWrite):
    """Replace the erasure's record with its receipt iff it is still running: a retried last step writes
    nothing twice."""

    label: str = Label.ERASURE


@dataclass(frozen=True)
class CountErased:
    """Add one batch's counts (per item kind) to the erasure's record iff it is still running, in the batch's
    own transaction: a batch that landed is counted once, whether or not its step heard back."""

    workspace_id: str
    erasure_id: str
    counts: Mapping[str, int]
    """By attribute (`deleted#{kind}`, `pseudonymized#{kind}`)."""
    label: str = Label.ERASURE
