"""The change feed's translation and batching (layers/core/workspace_memory/governance/changefeed.py), pure: stream
records as Lambda delivers them, a publisher that records or refuses."""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes import DynamoDBStreamEvent
from boto3.dynamodb.types import TypeSerializer

from scripts.change_feed_event import TTL_IDENTITY, stream_record
from workspace_memory.adapters.eventbridge import EventBridgePublisher
from workspace_memory.governance.changefeed import MAX_BATCH, ChangeFeed, FeedEvent, rule_for, to_event
from workspace_memory.store import keys

pytestmark = pytest.mark.unit

WS = "ws_feed"
SECRET = b"\x01ciphertext-bytes\x02"
SHA = "ab" * 32


def _wire(item: dict[str, Any]) -> dict[str, Any]:
    serializer = TypeSerializer()
    return {k: serializer.serialize(v) for k, v in item.items()}


def _record(name: str, item: dict[str, Any], old: dict[str, Any] | None = None, seq: int = 1, **kw: Any) -> Any:
    new = None if name == "REMOVE" else _wire(item)
    previous = _wire(old if old is not None else item) if name != "INSERT" else None
    raw = stream_record(name, "t", seq, 1_700_000_000, previous, new, **kw)
    (record,) = DynamoDBStreamEvent({"Records": [raw]}).records
    return record


def _secretive(key: keys.Key, **attributes: Any) -> dict[str, Any]:
    """An item with the attributes that must never be published next to its ids."""
    return {**keys.as_key(key), "ciphertext": SECRET, "sha256": SHA, "bytes": 4242, **attributes}


def test_every_key_builder_has_a_rule() -> None:
    """A new item kind joins the feed by adding its rule; until then it is skipped, so this names it."""
    builders = [
        fn
        for name, fn in inspect.getmembers(keys, inspect.isfunction)
        if fn.__module__ == keys.__name__ and inspect.signature(fn).return_annotation in ("Key", keys.Key)
    ]
    assert len(builders) >= 12
    for builder in builders:
        args = ["x1" if p.annotation in ("str", str) else 7 for p in inspect.signature(builder).parameters.values()]
        pk, sk = builder(*args)
        assert rule_for(pk, sk) is not None, builder.__name__
    assert rule_for("HEALTH", "HEALTH") is None


CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        _secretive(keys.version(WS, 3), version=3, op="capture", author="alice", baseVersion=2, createdAt="t"),
        {"kind": "document-version", "id": "3", "version": 3, "op": "capture", "actor": "alice"},
    ),
    (
        _secretive(keys.head(WS), headVersion=3, op="save", updatedBy="bob", tombstone=False),
        {"kind": "document-head", "id": WS, "version": 3, "op": "save", "actor": "bob"},
    ),
    (
        _secretive(keys.notes(WS, "carol", "s-1"), workspaceId=WS, revision=4, updatedAt="t", ttl=5),
        {"kind": "notes", "id": "s-1", "version": 4, "op": None, "actor": "carol"},
    ),
    (
        {
            **keys.as_key(keys.admission("adm_1")),
            "workspaceId": WS,
            "userId": "dave",
            "status": "committed",
            "nonceHash": SHA,
            "credentialCiphertext": SECRET,
            "captureReceipt": {"ciphertextSha256": SHA, "bytes": 99},
        },
        {"kind": "admission", "id": "adm_1", "version": None, "op": "committed", "actor": "dave"},
    ),
    (
        {**keys.as_key(keys.credential("c-1")), "workspaceId": WS, "admissionId": "adm_1", "nonceHash": SHA},
        {"kind": "credential-slot", "id": "c-1", "version": None, "op": None, "actor": None},
    ),
    (
        {
            **keys.as_key(keys.receipt("c-1", 5, "adm_1", "0")),
            "workspaceId": WS,
            "admissionId": "adm_1",
            "status": "ok",
            "revision": 7,
        },
        {"kind": "receipt", "id": "adm_1", "version": 7, "op": "ok", "actor": None},
    ),
    (
        {**keys.as_key(keys.meta(WS)), "name": "secret project name", "ownerId": "erin", "consentRevision": 2},
        {"kind": "workspace", "id": WS, "version": 2, "op": None, "actor": "erin"},
    ),
]


@pytest.mark.parametrize(("item", "expected"), CASES, ids=lambda v: v.get("kind", "") if "pk" not in v else "")
def test_an_event_holds_ids_only(item: dict[str, Any], expected: dict[str, Any]) -> None:
    event = to_event(_record("MODIFY", item))
    assert event is not None
    detail = event.detail()
    assert {k: detail[k] for k in expected} == expected
    assert (detail["workspace"], detail["event"], detail["expired"]) == (WS, "MODIFY", False)
    assert detail["time"] == "2023-11-14T22:13:20.000Z"
    text = json.dumps(detail)
    for secret in (SHA, "ciphertext", "4242", "99", "secret project name", "x01"):
        assert secret not in text


def test_remove_reads_the_old_image_and_tells_ttl_from_a_delete() -> None:
    item = {**keys.as_key(keys.key_session(WS, "ks_1")), "openedBy": "alice", "expiresAt": 1, "ttl": 2}
    expired = to_event(_record("REMOVE", item, identity=TTL_IDENTITY))
    deleted = to_event(_record("REMOVE", item, identity={"type": "Service", "principalId": "someone.else"}))
    assert expired is not None
    assert deleted is not None
    assert (expired.kind, expired.id, expired.actor, expired.event, expired.expired) == (
        "key-session",
        "ks_1",
        "alice",
        "REMOVE",
        True,
    )
    assert deleted.expired is False


def test_keys_only_still_gives_the_ids_of_a_workspace_item() -> None:
    raw = stream_record("REMOVE", "t", 1, 1.0, _wire(keys.as_key(keys.version(WS, 9))), None)
    del raw["dynamodb"]["OldImage"]
    (record,) = DynamoDBStreamEvent({"Records": [raw]}).records
    event = to_event(record)
    assert event is not None
    assert (event.workspace, event.kind, event.id, event.version) == (WS, "document-version", "9", None)


def test_unknown_kinds_and_items_without_a_workspace_are_skipped() -> None:
    assert to_event(_record("INSERT", {"pk": "HEALTH", "sk": "HEALTH"})) is None
    assert to_event(_record("INSERT", {"pk": "WS#x", "sk": "SOMETHING-NEW"})) is None
    assert to_event(_record("INSERT", {**keys.as_key(keys.credential("c")), "admissionId": "a"})) is None


class Publisher:
    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.refuse = refuse
        self.calls: list[list[FeedEvent]] = []

    def publish(self, events: Sequence[FeedEvent]) -> set[int]:
        assert len(events) <= MAX_BATCH
        self.calls.append(list(events))
        return {i for i, e in enumerate(events) if e.id in self.refuse}


def _batch(n: int) -> list[Any]:
    return [_record("INSERT", {**keys.as_key(keys.version(WS, i + 1)), "version": i + 1}, seq=i + 1) for i in range(n)]


def test_records_are_published_in_order_ten_at_a_time() -> None:
    publisher = Publisher()
    unknown = _record("INSERT", {"pk": "HEALTH", "sk": "HEALTH"}, seq=99)
    result = ChangeFeed(publisher).handle([*_batch(23), unknown])
    assert [len(call) for call in publisher.calls] == [10, 10, 3]
    assert [e.id for call in publisher.calls for e in call] == [str(i) for i in range(1, 24)]
    assert (result.records, result.published, result.skipped, result.failed) == (24, 23, 1, [])
    assert result.response() == {"batchItemFailures": []}


def test_a_refused_entry_and_every_later_record_come_back_and_nothing_after_is_published() -> None:
    publisher = Publisher(refuse=frozenset({"14"}))
    records = _batch(25)
    result = ChangeFeed(publisher).handle(records)
    assert len(publisher.calls) == 2, "the third chunk waits for the retry"
    expected = [r.dynamodb.sequence_number for r in records[13:]]
    assert result.failed == expected
    assert result.response()["batchItemFailures"][0] == {"itemIdentifier": f"{14:021d}"}
    assert result.published == 19


class FakeEvents:
    def __init__(self, answer: dict[str, Any] | Exception) -> None:
        self.answer = answer
        self.entries: list[dict[str, Any]] = []

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.entries.extend(Entries)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _events(n: int) -> list[FeedEvent]:
    return [FeedEvent(WS, "notes", str(i), i, None, "u", None, "INSERT", False, f"c{i}") for i in range(n)]


def test_eventbridge_publisher_reports_entries_without_an_event_id() -> None:
    client = FakeEvents(
        {"FailedEntryCount": 1, "Entries": [{"EventId": "a"}, {"ErrorCode": "Throttling"}, {"EventId": "c"}]}
    )
    assert EventBridgePublisher(client, "bus").publish(_events(3)) == {1}
    assert [json.loads(e["Detail"])["changeId"] for e in client.entries] == ["c0", "c1", "c2"]
    assert {e["EventBusName"] for e in client.entries} == {"bus"}


def test_eventbridge_publisher_fails_the_whole_call_on_an_error() -> None:
    from botocore.exceptions import EndpointConnectionError

    client = FakeEvents(EndpointConnectionError(endpoint_url="http://x"))
    assert EventBridgePublisher(client, "bus").publish(_events(4)) == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="at most 10"):
        EventBridgePublisher(client, "bus").publish(_events(11))


def test_a_version_turned_into_a_stub_is_a_purge_by_whom_purged_it() -> None:
    """Forgetting a line (docs/architecture.md#forgetting-a-line) modifies old versions: the feed says purge and who,
    not the save they were."""
    before = _secretive(keys.version(WS, 3), version=3, op="save", author="alice", createdAt="t")
    stub = {k: v for k, v in before.items() if k != "ciphertext"} | {"purgedAt": "t2", "purgedBy": "erin"}
    event = to_event(_record("MODIFY", stub, old=before))
    assert event is not None
    assert (event.kind, event.id, event.version, event.op, event.actor) == ("document-version", "3", 3, "purge", "erin")
    text = json.dumps(event.detail())
    for leaked in (SHA, "ciphertext", "t2"):
        assert leaked not in text
    untouched = to_event(_record("MODIFY", before))
    assert untouched is not None
    assert (untouched.op, untouched.actor) == ("save", "alice")
