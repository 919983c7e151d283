"""The change feed end to end on the local stack: real writes through the HTTP API, their stream records read
off the moto table (scripts/change_feed_event.py: moto's DynamoDB Streams cannot feed a function), the
template's ChangeFeedFunction (from the built artifact, in a fresh execution environment), moto's EventBridge
with a rule delivering the feed's bus to an SQS queue, where the published events are read back."""

from __future__ import annotations

import base64
import copy
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from scripts.change_feed_event import Scenario, TableRecorder, write_scenario
from scripts.localstack.invoke import invoke
from scripts.localstack.resources import LocalResources
from scripts.localstack.template import ROOT
from tests.support import Api, new_user
from workspace_memory.adapters.aws import build_events_client
from workspace_memory.adapters.eventbridge import SOURCE, EventBridgePublisher
from workspace_memory.governance.changefeed import ChangeFeed
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration

DETAIL_KEYS = {"workspace", "kind", "id", "version", "op", "actor", "time", "event", "expired", "changeId"}


@dataclass(frozen=True)
class Feed:
    """The feed's bus on moto, delivered by a rule to a queue of this test's own."""

    sqs: Any
    queue_url: str

    def drain(self, expected: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The events delivered to the queue (long polls until `expected` arrived or `timeout` passed)."""
        bodies: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while len(bodies) < expected and time.monotonic() < deadline:
            answer = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
            for message in answer.get("Messages", []):
                bodies.append(json.loads(message["Body"]))
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return bodies


@pytest.fixture
def feed(stack_env: dict[str, str], resources: LocalResources) -> Iterator[Feed]:
    assert resources.change_feed_bus is not None
    assert stack_env["CHANGE_FEED_BUS_NAME"] == resources.change_feed_bus
    events = boto3.client("events", endpoint_url=resources.endpoint_url)
    sqs = boto3.client("sqs", endpoint_url=resources.endpoint_url)
    name = f"feed-{uuid.uuid4().hex[:8]}"
    queue_url = sqs.create_queue(QueueName=name)["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = resources.change_feed_bus
    events.put_rule(Name=name, EventBusName=bus, EventPattern=json.dumps({"source": [SOURCE]}))
    events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "queue", "Arn": queue_arn}])
    try:
        yield Feed(sqs, queue_url)
    finally:
        events.remove_targets(Rule=name, EventBusName=bus, Ids=["queue"])
        events.delete_rule(Name=name, EventBusName=bus)
        sqs.delete_queue(QueueUrl=queue_url)


@pytest.fixture
def recorded(api: Api, resources: LocalResources) -> tuple[Scenario, dict[str, Any]]:
    """The scenario's writes on the test stack, and the stream event they make."""
    recorder = TableRecorder(boto3.client("dynamodb", endpoint_url=resources.endpoint_url), resources.table_name)
    scenario = write_scenario(api, recorder, new_user("feed-owner"))
    return scenario, recorder.event()


def _secrets(scenario: Scenario, event: dict[str, Any]) -> list[str]:
    """Everything that must never leave: the texts, and every ciphertext (base64 as the stream carries it and
    raw) and SHA-256 the images hold, the capture receipt's included."""
    found = [scenario.memory_text, scenario.notes_text, "marker"]
    for record in event["Records"]:
        for image in (record["dynamodb"].get("NewImage"), record["dynamodb"].get("OldImage")):
            for name, value in (image or {}).items():
                if "B" in value:
                    found.append(value["B"])
                    found.append(base64.b64decode(value["B"]).decode("latin-1"))
                if name in ("sha256", "nonceHash") or ("S" in value and len(value["S"]) == 64):
                    found.append(value.get("S", ""))
    return [s for s in found if s]


def _run(event: dict[str, Any], environment: dict[str, str]) -> Any:
    """ChangeFeedFunction on `event` in a fresh execution environment from the artifact, as Lambda runs it."""
    invocation = invoke("ChangeFeedFunction", event, environment)
    assert invocation.kind == "result", invocation
    return invocation.payload


def _is_audit(record: dict[str, Any]) -> bool:
    return str(record["dynamodb"]["Keys"]["sk"]["S"]).startswith("AUDIT#")


def test_each_write_publishes_one_ids_only_event(
    feed: Feed, recorded: tuple[Scenario, dict[str, Any]], stack_env: dict[str, str]
) -> None:
    scenario, event = recorded
    audits = [r for r in event["Records"] if _is_audit(r)]
    records = [r for r in event["Records"] if not _is_audit(r)]
    assert audits  # each action's transaction wrote its audit event too...
    assert _run(event, stack_env) == {"batchItemFailures": []}
    delivered = feed.drain(len(records))
    assert len(delivered) == len(records)  # ...which the feed skips: every other record is published
    details = {d["detail"]["changeId"]: d["detail"] for d in delivered}
    assert set(details) == {r["eventID"] for r in records}
    assert all(d["source"] == SOURCE for d in delivered)
    for detail in details.values():
        assert set(detail) == DETAIL_KEYS
        assert detail["workspace"] == scenario.workspace

    def one(kind: str, item_id: str, name: str = "INSERT") -> dict[str, Any]:
        found: list[dict[str, Any]] = [
            d for d in details.values() if (d["kind"], d["id"], d["event"]) == (kind, item_id, name)
        ]
        assert len(found) == 1, (kind, item_id, name)
        return found[0]

    ws, owner = scenario.workspace, scenario.owner
    assert one("workspace", ws)["actor"] == owner
    assert one("workspace", ws, "MODIFY")["version"] == 1  # workspace AI on: consentRevision 1
    assert one("member", owner)["actor"] is None
    assert one("policy", ws)["version"] == 1
    assert [one("document-version", str(v))["op"] for v in (1, 2)] == ["save", "save"]
    assert one("document-version", "2")["actor"] == owner
    assert (one("document-head", ws, "MODIFY")["version"], one("document-head", ws, "MODIFY")["op"]) == (2, "save")
    assert one("key-session", scenario.key_session)["actor"] == owner
    assert one("admission", scenario.admission)["op"] == "admitted"
    assert one("admission-key", scenario.admission)["actor"] == owner
    assert one("conversation", scenario.conversation)["actor"] == owner
    assert one("credential-slot", scenario.conversation)["version"] is None
    receipt = one("receipt", scenario.admission)
    assert (receipt["op"], receipt["version"]) == ("ok", 2)
    notes = one("notes", scenario.session)
    assert (notes["actor"], notes["version"]) == (owner, 1)
    expired = one("key-session", scenario.key_session, "REMOVE")
    assert expired["expired"] is True
    assert [d for d in details.values() if d["expired"]] == [expired]

    published = json.dumps(delivered)
    secrets = _secrets(scenario, event)
    ciphertexts = [
        r for r in records for image in r["dynamodb"].values() if isinstance(image, dict) and "ciphertext" in image
    ]
    assert len(ciphertexts) >= 5  # the versions, the head twice, the notes: what the check below looks for
    leaks = [s for s in secrets if s in published]
    assert leaks == []
    assert "ciphertext" not in published
    assert "sha256" not in published.lower()


def test_the_committed_sample_is_published_but_for_its_audit_records(feed: Feed, stack_env: dict[str, str]) -> None:
    """events/change-feed-stream.json (scripts/change_feed_event.py's output) runs through the function: every
    record but the audit trail's own (the trail is read through its route, not published) becomes one event."""
    event = json.loads((ROOT / "events" / "change-feed-stream.json").read_text(encoding="utf-8"))
    published = [r["eventID"] for r in event["Records"] if not _is_audit(r)]
    assert 0 < len(published) < len(event["Records"])  # the sample holds both kinds
    assert _run(event, stack_env) == {"batchItemFailures": []}
    delivered = feed.drain(len(published))
    assert sorted(d["detail"]["changeId"] for d in delivered) == sorted(published)
    assert feed.drain(1, timeout=2.0) == []


def test_a_failed_publish_is_reported_as_batch_item_failures(
    feed: Feed, recorded: tuple[Scenario, dict[str, Any]], settings: Settings
) -> None:
    """A bus that refuses (here: one that does not exist) loses nothing: every record comes back to Lambda,
    first one first, and nothing reaches the feed's bus."""
    _, event = recorded
    publisher = EventBridgePublisher(build_events_client(settings), f"missing-{uuid.uuid4().hex[:8]}")
    from aws_lambda_powertools.utilities.data_classes import DynamoDBStreamEvent

    result = ChangeFeed(publisher).handle(DynamoDBStreamEvent(copy.deepcopy(event)).records)
    first = next(n for n, r in enumerate(event["Records"]) if not _is_audit(r))  # skipped records are done
    sequences = [r["dynamodb"]["SequenceNumber"] for r in event["Records"][first:]]
    assert result.response() == {"batchItemFailures": [{"itemIdentifier": s} for s in sequences]}
    assert (result.published, result.failed) == (0, sequences)
    assert feed.drain(1, timeout=2.0) == []


def test_a_batch_is_one_log_line_with_the_invocations_context(
    stack_env: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    """inject_lambda_context: the batch's one line carries the request id and the cold start, as every HTTP
    function's request line does (the environment's output is this process's stderr here)."""
    capfd.readouterr()
    assert _run({"Records": []}, stack_env) == {"batchItemFailures": []}
    err = capfd.readouterr().err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{") and '"_aws"' not in line]
    assert [line["message"] for line in lines] == ["change feed batch"]
    assert lines[0]["function_name"] == "ChangeFeedFunction"
    assert lines[0]["function_request_id"]
    assert lines[0]["cold_start"] is True
