"""DynamoDB stream records of real writes, in the shape Lambda delivers them (`sam local generate-event dynamodb
update`), for the change feed: moto 5.2.5's DynamoDB Streams answer DescribeStream with "Not yet implemented",
so no stream can feed the function locally.

    .venv/bin/python -m scripts.change_feed_event [--out events/change-feed-stream.json]

regenerates the committed sample: it starts its own local stack (moto server and gateway), makes the writes of
`write_scenario` through the HTTP API, and writes the records. tests/integration/governance/test_change_feed.py
makes the same writes on the test stack and runs the function on what they produce.

`TableRecorder` turns writes into records by reading the table around each one (every item in DynamoDB JSON,
as the stream carries it): an item that appeared is an INSERT with its NewImage, one that changed a MODIFY
with both images, one that disappeared a REMOVE with its OldImage (NEW_AND_OLD_IMAGES, the template's view
type). `expire` adds the REMOVE that DynamoDB's TTL would make of an item (moto runs no TTL sweeper).
"""

from __future__ import annotations

import argparse
import base64
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from scripts.localstack.client import DevClient

REGION = "us-east-1"
ACCOUNT = "123456789012"
STREAM_LABEL = "2025-01-01T00:00:00.000"
SAMPLE = Path(__file__).resolve().parents[1] / "events" / "change-feed-stream.json"
TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}

WireItem = dict[str, Any]
"""An item in DynamoDB JSON as boto3's low-level client returns it (binaries as bytes)."""


def to_json(value: Any) -> Any:
    """DynamoDB JSON as a Lambda event carries it: binaries base64-encoded."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


def _key(item: WireItem) -> tuple[str, str]:
    return item["pk"]["S"], item["sk"]["S"]


def stream_record(
    name: str,
    table_name: str,
    sequence: int,
    at: float,
    old: WireItem | None,
    new: WireItem | None,
    identity: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One record of `sam local generate-event dynamodb update`'s shape, for a table whose view type is
    NEW_AND_OLD_IMAGES."""
    image = new if new is not None else old
    if image is None:
        raise ValueError("a record needs an image")
    stream: dict[str, Any] = {
        "ApproximateCreationDateTime": int(at),
        "Keys": to_json({"pk": image["pk"], "sk": image["sk"]}),
        "SequenceNumber": f"{sequence:021d}",
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        stream["NewImage"] = to_json(new)
    if old is not None:
        stream["OldImage"] = to_json(old)
    stream["SizeBytes"] = len(json.dumps({k: stream[k] for k in ("Keys", "NewImage", "OldImage") if k in stream}))
    record: dict[str, Any] = {
        "eventID": uuid.uuid5(uuid.NAMESPACE_URL, f"{table_name}/{sequence}").hex,
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": REGION,
        "dynamodb": stream,
        "eventSourceARN": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table_name}/stream/{STREAM_LABEL}",
    }
    if identity is not None:
        record["userIdentity"] = identity
    return record


@dataclass
class TableRecorder:
    """Stream records of the writes made inside `write`, read off the table around each (module docstring)."""

    ddb: Any
    """A low-level DynamoDB client."""
    table_name: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def _items(self) -> dict[tuple[str, str], WireItem]:
        items: dict[tuple[str, str], WireItem] = {}
        kwargs: dict[str, Any] = {"TableName": self.table_name, "ConsistentRead": True}
        while True:
            page = self.ddb.scan(**kwargs)
            items.update((_key(item), item) for item in page["Items"])
            if "LastEvaluatedKey" not in page:
                return items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _add(
        self, name: str, old: WireItem | None, new: WireItem | None, identity: dict[str, str] | None = None
    ) -> None:
        sequence = len(self.records) + 1
        self.records.append(stream_record(name, self.table_name, sequence, time.time(), old, new, identity))

    def write(self, action: Callable[[], Any]) -> Any:
        """Runs `action` and records what it changed in the table; returns what it returned."""
        before = self._items()
        result = action()
        after = self._items()
        for key in sorted(before.keys() | after.keys()):
            old, new = before.get(key), after.get(key)
            if old is None and new is not None:
                self._add("INSERT", None, new)
            elif old is not None and new is None:
                self._add("REMOVE", old, None)
            elif old != new:
                self._add("MODIFY", old, new)
        return result

    def expire(self, pk: str, sk: str) -> WireItem:
        """The REMOVE record DynamoDB's TTL would make of the item at (pk, sk), which stays in the table."""
        item = self._items()[(pk, sk)]
        if "ttl" not in item:
            raise ValueError(f"{pk} {sk} has no ttl: DynamoDB would never expire it")
        self._add("REMOVE", item, None, TTL_IDENTITY)
        return item

    def event(self) -> dict[str, Any]:
        return {"Records": list(self.records)}


@dataclass(frozen=True)
class Scenario:
    """What `write_scenario` wrote: the ids, and the texts that must never reach the feed."""

    workspace: str
    owner: str
    key_session: str
    conversation: str
    admission: str
    session: str
    memory_text: str
    notes_text: str


def _ok(response: Any, status: int) -> Any:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.path_url}: {response.status_code} {response.text}"
        )
    return response.json() if response.text else None


def write_scenario(client: DevClient, recorder: TableRecorder, owner: str, runtime: str = "feed-runtime") -> Scenario:
    """Every kind of write the service makes, each through the HTTP API and recorded: a workspace and its
    owner, workspace AI on, the `auto` policy, a key session, two Saves (the second modifies the head), an
    admission under the key session, a recall (its receipt), a working-notes write, and the key session's
    TTL expiry."""
    memory_text = f"# Team\n- marker {uuid.uuid4().hex} deploys on Fridays\n"
    notes_text = f"notes marker {uuid.uuid4().hex}"
    ws = recorder.write(
        lambda: _ok(
            client.call("POST", "/v1/workspaces", user=owner, json={"name": "feed", "shareType": "shared"}), 201
        )
    )["workspaceId"]
    recorder.write(lambda: _ok(client.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}), 200))
    policy = {"mode": "auto", "expectedRevision": 0}
    recorder.write(lambda: _ok(client.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json=policy), 200))
    scopes = {"scopes": ["memory:read", "memory:write", "notes"]}  # as recorded in events/change-feed-stream.json
    key_session = recorder.write(
        lambda: _ok(client.call("POST", f"/v1/workspaces/{ws}/key-sessions", user=owner, json=scopes), 201)
    )["keySessionId"]

    def save(base: int, text: str) -> Any:
        headers = {"X-Base-Version": str(base)}
        return _ok(
            client.call("PUT", f"/v1/workspaces/{ws}/memory", user=owner, json={"content": text}, headers=headers), 200
        )

    recorder.write(partial(save, 0, memory_text))
    recorder.write(partial(save, 1, memory_text + "- and a second line\n"))
    conversation, session = f"conv-{uuid.uuid4().hex[:8]}", f"sess-{uuid.uuid4().hex[:8]}"
    body = {
        "workspaceId": ws,
        "userId": owner,
        "idempotencyKey": "feed-1",
        "keySessionId": key_session,
        "sessionId": session,
    }
    admitted = recorder.write(
        lambda: _ok(
            client.call(
                "POST", f"/v1/automation/conversations/{conversation}/admissions", automation=runtime, json=body
            ),
            201,
        )
    )
    headers = {"X-Admission-Id": admitted["admissionId"], "X-Delivery-Credential": admitted["credential"]}
    recall = f"/v1/automation/workspaces/{ws}/memory?purpose=recall"
    recorder.write(lambda: _ok(client.call("GET", recall, automation=runtime, headers=headers), 200))
    notes = f"/v1/automation/sessions/{session}/notes"
    recorder.write(
        lambda: _ok(client.call("PUT", notes, automation=runtime, json={"notes": notes_text}, headers=headers), 200)
    )
    recorder.expire(f"WS#{ws}", f"KEYSESSION#{key_session}")
    return Scenario(ws, owner, key_session, conversation, admitted["admissionId"], session, memory_text, notes_text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=SAMPLE, help=f"where to write the event ({SAMPLE.name})")
    args = parser.parse_args(argv)

    from scripts.localstack.resources import isolate_environment

    isolate_environment()
    import boto3

    from scripts.localstack.stack import LocalStack, StackConfig

    with LocalStack(StackConfig(table_name="workspace-memory")) as stack:
        resources = stack.resources()
        recorder = TableRecorder(boto3.client("dynamodb", endpoint_url=resources.endpoint_url), resources.table_name)
        write_scenario(DevClient(stack.gateway()), recorder, "user-owner")
    args.out.write_text(json.dumps(recorder.event(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(recorder.records)} records to {args.out}")


if __name__ == "__main__":
    main()
