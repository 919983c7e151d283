"""The erasure of a member, as the table holds it: its record (the receipt once done), and what erasing does
to any one item that names the member (docs/architecture.md#erasing-a-member).

What an item does is judged on its layout alone, never on a list of attributes that hold user ids: an item
keyed by the member (its sort key holds their id as one `#` segment: a membership, a notebook, a rate bucket),
a key session they opened, a candidate their agent proposed and their private entries are deleted; in every
other item, any value equal to their id (or encoding it: an admission's id), at any depth, becomes their
pseudonym, and any attribute named after them is removed. An attribute added tomorrow that names a person is
erased by the same rule, unseen."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workspace_memory.store import keys
from workspace_memory.store.feed_images import rule_for
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import present

RUNNING, COMPLETED = "running", "completed"
DELETED, PSEUDONYMIZED = "deleted#", "pseudonymized#"
DELETED_WHEN_NAMED_BY = {
    "key-session": "openedBy",
    "entry-candidate": "proposedBy",
    "entry": "scopeOwner",
    "entry-revision": "scopeOwner",
    "page": "scopeOwner",
    "page-entry": "scopeOwner",
    "entry-filing": "scopeOwner",
}
"""Item kinds deleted, not pseudonymized, when the member is the one the attribute names: a delegation they
opened, a proposal their agent made, their private entries (what a forget of them left: the tombstone head),
their private pages and the filings in them (each filing carries its page's owner)."""


ALWAYS_DELETED = frozenset({"export", "export-part"})
"""Archives built before the erasure hold the member's data and id (sealed): they go, whoever asked for them."""


def _counts(item: Item, prefix: str) -> dict[str, int]:
    return {name.removeprefix(prefix): int(value) for name, value in item.items() if name.startswith(prefix)}


def counted(deleted: Mapping[str, int], pseudonymized: Mapping[str, int]) -> dict[str, int]:
    """One batch's counts as the record's attributes (`CountErased`)."""
    return {f"{DELETED}{kind}": n for kind, n in deleted.items()} | {
        f"{PSEUDONYMIZED}{kind}": n for kind, n in pseudonymized.items()
    }


def requester_digest(erasure_id: str, user_id: str) -> str:
    """Who asked, checkable without keeping their id: the erasure's id is the salt."""
    return hashlib.sha256(f"{erasure_id}\n{user_id}".encode()).hexdigest()


@dataclass(frozen=True)
class ErasureRecord:
    erasure_id: str
    pseudonym: str
    requested_by: str
    """The owner's id, or the pseudonym when the member erased themself."""
    requester: str
    """`requester_digest` of the one who asked."""
    requested_at: str
    subject: str | None
    """The member's id while the erasure runs (its steps read it here, so no workflow history holds it);
    removed by the last step."""
    status: str = RUNNING
    completed_at: str | None = None
    deleted: Mapping[str, int] = field(default_factory=dict)
    """Items deleted, per kind (`deleted#{kind}` attributes, added to by each batch)."""
    pseudonymized: Mapping[str, int] = field(default_factory=dict)
    """Items whose attributes now name the pseudonym, per kind (`pseudonymized#{kind}`)."""

    @classmethod
    def of(cls, item: Item | None) -> ErasureRecord | None:
        if item is None:
            return None
        return cls(
            erasure_id=item["erasureId"],
            pseudonym=item["pseudonym"],
            requested_by=item["requestedBy"],
            requester=item["requester"],
            requested_at=item["requestedAt"],
            subject=item.get("subject"),
            status=item["status"],
            completed_at=item.get("completedAt"),
            deleted=_counts(item, DELETED),
            pseudonymized=_counts(item, PSEUDONYMIZED),
        )

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.erasure(workspace_id, self.erasure_id)),
            "erasureId": self.erasure_id,
            "pseudonym": self.pseudonym,
            "requestedBy": self.requested_by,
            "requester": self.requester,
            "requestedAt": self.requested_at,
            "status": self.status,
            **{f"{DELETED}{kind}": n for kind, n in self.deleted.items()},
            **{f"{PSEUDONYMIZED}{kind}": n for kind, n in self.pseudonymized.items()},
            **present({"subject": self.subject, "completedAt": self.completed_at}),
        }


Rename = Callable[[str], str]
"""A string as erasing the member leaves it: their id becomes the pseudonym, an id that encodes theirs (an
admission's) is encoded anew with the pseudonym; any other string is itself."""


def _replaced(value: Any, rename: Rename) -> Any:
    if isinstance(value, str):
        return rename(value)
    if isinstance(value, Mapping):
        return {k: _replaced(v, rename) for k, v in value.items()}
    if isinstance(value, set):
        return {_replaced(v, rename) for v in value}
    if isinstance(value, list | tuple):
        return [_replaced(v, rename) for v in value]
    return value


def kind_of(item: Item) -> str:
    rule = rule_for(item["pk"], item["sk"])
    return "other" if rule is None else rule.kind


def key_of(item: Item) -> keys.Key:
    return item["pk"], item["sk"]


def sort_key(item: Item) -> str:
    return str(item["sk"])


def is_erasure(item: Item) -> bool:
    """An erasure's own record: never judged by an erasure's steps (it holds whom they erase)."""
    return sort_key(item).startswith(keys.ERASURE_PREFIX)


def keyed_by(item: Item, subject: str) -> bool:
    """The item's key holds the member's id (one `#` segment of its sort key)."""
    return subject in str(item["sk"]).split("#")


def deleted_by_erasure(item: Item, subject: str) -> bool:
    """Erasing `subject` deletes this item (see the module docstring)."""
    kind = kind_of(item)
    attribute = DELETED_WHEN_NAMED_BY.get(kind)
    named = attribute is not None and item.get(attribute) == subject
    return kind in ALWAYS_DELETED or keyed_by(item, subject) or named


@dataclass(frozen=True)
class Rewrite:
    """The attributes of one item that name the member: their values as read, and as they become (None:
    the attribute is removed)."""

    before: Mapping[str, Any]
    after: Mapping[str, Any]


def rewrite_of(item: Item, subject: str, rename: Rename) -> Rewrite | None:
    """How erasing `subject` rewrites this item, or None when it names them nowhere."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for name, value in item.items():
        if name in ("pk", "sk"):
            continue
        if subject in name.split("#"):
            before[name], after[name] = value, None
            continue
        erased = _replaced(value, rename)
        if erased != value:
            before[name], after[name] = value, erased
    return Rewrite(before, after) if after else None
