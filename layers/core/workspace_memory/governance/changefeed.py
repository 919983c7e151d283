"""The change feed (docs/architecture.md#the-change-feed): each DynamoDB stream record of the table becomes at most one
ids-only audit event, published to the feed's EventBridge bus.

An event is built from an explicit allowlist per item kind (`RULES`), never by copying the image: the detail
is `{workspace, kind, id, version, op, actor, time, event, expired, changeId}`, where every value is an id,
a number, a fixed status word or a timestamp. Never memory or note text, never ciphertext, and no hash or
size of either (`sha256`, `bytes`, a capture receipt's `ciphertextSha256`): a digest of a short text can be
confirmed by guessing, and a size says how much was written. An item of a kind with no rule (a kind added
later, or `HEALTH`) is skipped and counted, not published with a guess: each new item kind joins the feed
by adding its rule (tests/unit/governance/test_changefeed.py fails for a key builder in keys.py without one).

Delivery is at least once and in stream order: records are published in chunks of at most `MAX_BATCH`
(EventBridge's PutEvents limit); at the first entry that fails, that record and every later one of the
batch are reported as batch item failures (Lambda retries the shard from the lowest one), and nothing after
it is published. Entries of the failing chunk that did succeed are published again on the retry: consumers
deduplicate by `changeId` (the stream record's id).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
    DynamoDBRecordEventName,
)

from workspace_memory.kernel.clock import iso

if TYPE_CHECKING:
    from workspace_memory.store.ports import EventPublisher

MAX_BATCH = 10
"""Entries per PutEvents call (EventBridge's limit)."""
TTL_PRINCIPAL = "dynamodb.amazonaws.com"
"""The `userIdentity.principalId` of a stream record for an item DynamoDB's TTL removed."""

Image = Mapping[str, Any]


@dataclass(frozen=True)
class FeedEvent:
    """One audit event: ids, numbers, status words and times only (see the module docstring)."""

    workspace: str
    kind: str
    id: str
    version: int | None
    op: str | None
    actor: str | None
    time: str | None
    event: str
    """The stream's event name: INSERT, MODIFY or REMOVE."""
    expired: bool
    """A REMOVE made by DynamoDB's TTL, not by a function."""
    change_id: str
    """The stream record's eventID: the same change published twice has the same one."""

    def detail(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "kind": self.kind,
            "id": self.id,
            "version": self.version,
            "op": self.op,
            "actor": self.actor,
            "time": self.time,
            "event": self.event,
            "expired": self.expired,
            "changeId": self.change_id,
        }


@dataclass(frozen=True)
class Rule:
    """How one item kind maps to an event. `pk_prefix` and `sk` select the items (`sk` ending in `#` is a
    prefix, anything else the whole sort key); the other fields name the only attributes read: `workspace`
    (None: the `WS#` partition key), `version`, `op` and `actor`. `id` derives the event's id from the keys
    and the image; `actor_from_key`, when set, derives the actor from the keys instead of an attribute."""

    kind: str
    pk_prefix: str
    sk: str
    id: Callable[[str, str, Image], object]
    workspace: str | None = None
    version: str | None = None
    op: str | None = None
    actor: str | None = None
    actor_from_key: Callable[[str, str], str] | None = None
    stubbed_by: str | None = None
    """An attribute that, when the image has it, makes the event's op `purge` and its actor that attribute's
    value: a version turned into a stub is audited as the purge it is, by whom, not as its original op."""

    def matches(self, pk: str, sk: str) -> bool:
        if not pk.startswith(self.pk_prefix):
            return False
        return sk.startswith(self.sk) if self.sk.endswith("#") else sk == self.sk


def _pk_id(pk: str, _sk: str, _image: Image) -> str:
    return pk.split("#", 1)[1]


def _sk_id(_pk: str, sk: str, _image: Image) -> str:
    return sk.split("#", 1)[1]


def _attribute(name: str) -> Callable[[str, str, Image], object]:
    def read(_pk: str, _sk: str, image: Image) -> object:
        return image.get(name)

    return read


def _version_id(_pk: str, sk: str, _image: Image) -> str:
    return str(int(sk.rsplit("#", 1)[1]))


def _notes_session(_pk: str, sk: str, _image: Image) -> str:
    return sk.rsplit("#", 1)[1]


def _notes_user(_pk: str, sk: str) -> str:
    return sk.removeprefix("NOTES#").rsplit("#", 1)[0]


PURGE_OP = "purge"
"""The op of a version turned into a stub by forgetting a line (docs/architecture.md#forgetting-a-line)."""


def _entry_of_revision(_pk: str, sk: str, _image: Image) -> str:
    return sk.split("#")[1]


def _rate_hour(_pk: str, sk: str, _image: Image) -> str:
    return sk.split("#")[1]


def _rate_user(_pk: str, sk: str) -> str:
    return sk.split("#", 2)[2]


RULES: tuple[Rule, ...] = (
    Rule("workspace", "WS#", "META", _pk_id, version="consentRevision", actor="ownerId"),
    Rule("member", "WS#", "MEMBER#", _sk_id),
    Rule("policy", "WS#", "POLICY", _pk_id, version="policyRevision"),
    Rule("document-head", "WS#", "DOC#HEAD", _pk_id, version="headVersion", op="op", actor="updatedBy"),
    Rule(
        "document-version",
        "WS#",
        "DOC#V#",
        _version_id,
        version="version",
        op="op",
        actor="author",
        stubbed_by="purgedBy",
    ),
    Rule("key-session", "WS#", "KEYSESSION#", _sk_id, actor="openedBy"),
    Rule("key-revocation", "WS#", "KEYREVOKED#", _sk_id, actor="revokedBy"),
    Rule("notes", "WS#", "NOTES#", _notes_session, version="revision", actor_from_key=_notes_user),
    Rule("entry", "WS#", "ENTRY#", _sk_id, version="revision", op="status", actor="author"),
    Rule("entry-revision", "WS#", "ENTRYREV#", _entry_of_revision, version="revision", op="status", actor="author"),
    Rule("entry-key", "WS#", "ENTRYKEY#", _attribute("entryId")),
    Rule("entry-counter", "WS#", "ENTRIES", _pk_id, version="entriesRevision"),
    Rule("entry-key-secret", "WS#", "ENTRYSECRET", _pk_id),
    Rule("entry-candidate", "WS#", "ENTRYCAND#", _sk_id, version="revision", op="status", actor="proposedBy"),
    Rule("entry-save", "WS#", "ENTRYSAVE#", _sk_id),
    Rule("entry-rate", "WS#", "ENTRYRATE#", _rate_hour, version="writes", actor_from_key=_rate_user),
    Rule("search-snapshot", "WS#", "SEARCHSNAP#", _attribute("generation"), version="entriesRevision"),
    Rule("conversation", "CONV#", "OWNER", _pk_id, workspace="workspaceId", actor="userId"),
    Rule("credential-slot", "CONV#", "CREDENTIAL", _pk_id, workspace="workspaceId"),
    Rule("admission-key", "CONV#", "ADMKEY#", _attribute("admissionId"), workspace="workspaceId", actor="userId"),
    Rule(
        "receipt",
        "CONV#",
        "RECEIPT#",
        _attribute("admissionId"),
        workspace="workspaceId",
        version="revision",
        op="status",
    ),
    Rule("admission", "ADM#", "ADMISSION", _pk_id, workspace="workspaceId", op="status", actor="userId"),
)


def rule_for(pk: str, sk: str) -> Rule | None:
    return next((rule for rule in RULES if rule.matches(pk, sk)), None)


def _text(value: object) -> str | None:
    """An id or a status word, or nothing: any other type is left out rather than published."""
    return value if isinstance(value, str) and value else None


def _number(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    return int(value)


def _expired(record: DynamoDBRecord) -> bool:
    identity = record.user_identity
    return identity.get("type") == "Service" and identity.get("principalId") == TTL_PRINCIPAL


def to_event(record: DynamoDBRecord) -> FeedEvent | None:
    """The record's audit event, or None for an item kind the feed does not publish (or a record that names
    no workspace). REMOVE reads the old image, the others the new one; a view without images (KEYS_ONLY)
    still gives the keys' ids."""
    stream = record.dynamodb
    name = record.event_name
    if stream is None or name is None or record.event_id is None:
        return None
    keys = stream.keys
    pk, sk = keys.get("pk"), keys.get("sk")
    if not isinstance(pk, str) or not isinstance(sk, str):
        return None
    rule = rule_for(pk, sk)
    if rule is None:
        return None
    image: Image = (stream.old_image if name is DynamoDBRecordEventName.REMOVE else stream.new_image) or {}
    workspace = _pk_id(pk, sk, image) if rule.workspace is None else _text(image.get(rule.workspace))
    item_id = _text(rule.id(pk, sk, image))
    if workspace is None or item_id is None:
        return None
    created = stream.approximate_creation_date_time
    actor = rule.actor_from_key(pk, sk) if rule.actor_from_key else _text(image.get(rule.actor or ""))
    op = _text(image.get(rule.op)) if rule.op else None
    if rule.stubbed_by and rule.stubbed_by in image:
        op, actor = PURGE_OP, _text(image.get(rule.stubbed_by))
    return FeedEvent(
        workspace=workspace,
        kind=rule.kind,
        id=item_id,
        version=_number(image.get(rule.version)) if rule.version else None,
        op=op,
        actor=actor,
        time=None if created is None else iso(float(created)),
        event=name.name,
        expired=name is DynamoDBRecordEventName.REMOVE and _expired(record),
        change_id=record.event_id,
    )


@dataclass(frozen=True)
class FeedResult:
    """What one batch did: counts for the log, and the sequence numbers Lambda must deliver again."""

    records: int
    published: int
    skipped: int
    failed: list[str]

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response (FunctionResponseTypes: ReportBatchItemFailures)."""
        return {"batchItemFailures": [{"itemIdentifier": sequence} for sequence in self.failed]}


class ChangeFeed:
    """Stream records in, ids-only events out through the publisher port (see the module docstring)."""

    def __init__(self, publisher: EventPublisher) -> None:
        self._publisher = publisher

    def handle(self, records: Iterable[DynamoDBRecord]) -> FeedResult:
        ordered = list(records)
        sequences = [(r.dynamodb.sequence_number if r.dynamodb else None) or r.event_id or "" for r in ordered]
        pending = [(i, event) for i, event in enumerate(to_event(r) for r in ordered) if event is not None]
        published = 0
        for start in range(0, len(pending), MAX_BATCH):
            chunk = pending[start : start + MAX_BATCH]
            failed = self._publisher.publish([event for _, event in chunk])
            if failed:
                first = chunk[min(failed)][0]
                published += len(chunk) - len(failed)
                return FeedResult(len(ordered), published, len(ordered) - len(pending), sequences[first:])
            published += len(chunk)
        return FeedResult(len(ordered), published, len(ordered) - len(pending), [])
