"""The change feed (docs/architecture.md#the-change-feed): each DynamoDB stream record of the table becomes at most one
ids-only audit event, published to the feed's EventBridge bus.

An event is built from an explicit allowlist per item kind (`store/feed_images.py`'s `RULES`: the only
attributes read of each kind), never by copying the image: the detail
is `{workspace, kind, id, version, op, actor, time, event, expired, changeId}`, where every value is an id,
a number, a fixed status word or a timestamp. Never memory or note text, never ciphertext, and no hash or
size of either (`sha256`, `bytes`, a capture receipt's `ciphertextSha256`): a digest of a short text can be
confirmed by guessing, and a size says how much was written. An item of a kind with no rule (a kind added
later, or `HEALTH`) is skipped and counted, not published with a guess: each new item kind joins the feed
by adding its rule there (tests/unit/governance/test_changefeed.py fails for a key builder in keys.py without
one).

Delivery is at least once and in stream order: records are published in chunks of at most `MAX_BATCH`
(EventBridge's PutEvents limit); at the first entry that fails, that record and every later one of the
batch are reported as batch item failures (Lambda retries the shard from the lowest one), and nothing after
it is published. Entries of the failing chunk that did succeed are published again on the retry: consumers
deduplicate by `changeId` (the stream record's id).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
    DynamoDBRecordEventName,
)

from workspace_memory.kernel.clock import iso
from workspace_memory.store.feed_images import Image, read_image, stream_key
from workspace_memory.store.feed_images import rule_for as rule_for

if TYPE_CHECKING:
    from workspace_memory.store.ports import EventPublisher

MAX_BATCH = 10
"""Entries per PutEvents call (EventBridge's limit)."""
TTL_PRINCIPAL = "dynamodb.amazonaws.com"
"""The `userIdentity.principalId` of a stream record for an item DynamoDB's TTL removed."""


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


PURGE_OP = "purge"
"""The op of a version turned into a stub by forgetting a line (docs/architecture.md#forgetting-a-line)."""


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
    key = stream_key(stream.keys)
    if key is None:
        return None
    image: Image = (stream.old_image if name is DynamoDBRecordEventName.REMOVE else stream.new_image) or {}
    facts = read_image(key, image)
    if facts is None:
        return None
    created = stream.approximate_creation_date_time
    op, actor = (PURGE_OP, facts.stubbed_by) if facts.stubbed else (facts.op, facts.actor)
    return FeedEvent(
        workspace=facts.workspace,
        kind=facts.kind,
        id=facts.id,
        version=facts.version,
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
