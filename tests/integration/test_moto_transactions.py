"""The local moto server keeps TransactWriteItems all-or-nothing while rolling back only the items a cancelled
transaction names (scripts/localstack/moto_server.py `rollback_touched_items`), not whole-table backups.

Everything else in the suite relies on this (every "refused and nothing written" check), so it is pinned
here on its own: a transaction that puts, updates and deletes, then fails a later condition, leaves every
item as it was, and an item put under a new partition key leaves nothing a query or scan could see. And a
failed condition that asked for `ALL_OLD` names the item it was judged against, as DynamoDB does.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from scripts.localstack.resources import FAKE_CREDENTIALS, LocalResources, create_table

pytestmark = pytest.mark.integration


@pytest.fixture
def table(resources: LocalResources) -> Iterator[tuple[Any, str]]:
    client = boto3.client(
        "dynamodb",
        endpoint_url=resources.endpoint_url,
        region_name=FAKE_CREDENTIALS["AWS_REGION"],
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
    )
    name = f"wm-tx-{uuid.uuid4().hex[:10]}"
    create_table(resources.endpoint_url, name)
    try:
        yield client, name
    finally:
        client.delete_table(TableName=name)


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def _scan(client: Any, name: str) -> list[dict[str, Any]]:
    return sorted(client.scan(TableName=name, ConsistentRead=True)["Items"], key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


def test_a_cancelled_transaction_leaves_every_item_as_it_was(table: tuple[Any, str]) -> None:
    client, name = table
    client.put_item(TableName=name, Item={**_key("P", "updated"), "n": {"N": "1"}, "cipherBytes": {"B": b"\x00x"}})
    client.put_item(TableName=name, Item={**_key("P", "deleted"), "n": {"N": "2"}})
    client.put_item(TableName=name, Item={**_key("P", "checked"), "n": {"N": "3"}})
    before = _scan(client, name)

    with pytest.raises(ClientError) as refused:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": name, "Item": {**_key("P", "new"), "n": {"N": "9"}}}},
                {"Put": {"TableName": name, "Item": {**_key("NEWPARTITION", "x"), "n": {"N": "9"}}}},
                {
                    "Update": {
                        "TableName": name,
                        "Key": _key("P", "updated"),
                        "UpdateExpression": "SET n = n + :one, extra = :e REMOVE cipherBytes",
                        "ExpressionAttributeValues": {":one": {"N": "1"}, ":e": {"S": "e"}},
                    }
                },
                {"Delete": {"TableName": name, "Key": _key("P", "deleted")}},
                {
                    "ConditionCheck": {
                        "TableName": name,
                        "Key": _key("P", "checked"),
                        "ConditionExpression": "n = :other",
                        "ExpressionAttributeValues": {":other": {"N": "4"}},
                    }
                },
            ]
        )
    assert refused.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert _scan(client, name) == before
    assert (
        client.query(
            TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "NEWPARTITION"}}
        )["Items"]
        == []
    )
    assert client.describe_table(TableName=name)["Table"]["ItemCount"] == len(before)


def test_a_transaction_that_holds_applies_every_action(table: tuple[Any, str]) -> None:
    client, name = table
    client.put_item(TableName=name, Item={**_key("P", "updated"), "n": {"N": "1"}})
    client.put_item(TableName=name, Item={**_key("P", "deleted"), "n": {"N": "2"}})
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": name, "Item": {**_key("P", "new"), "n": {"N": "9"}}}},
            {
                "Update": {
                    "TableName": name,
                    "Key": _key("P", "updated"),
                    "UpdateExpression": "SET n = n + :one",
                    "ConditionExpression": "n = :was",
                    "ExpressionAttributeValues": {":one": {"N": "1"}, ":was": {"N": "1"}},
                }
            },
            {"Delete": {"TableName": name, "Key": _key("P", "deleted")}},
        ]
    )
    assert [(i["sk"]["S"], i["n"]["N"]) for i in _scan(client, name)] == [("new", "9"), ("updated", "2")]


def test_a_failed_condition_with_all_old_names_the_item_it_was_judged_against(table: tuple[Any, str]) -> None:
    """DynamoDB's `ReturnValuesOnConditionCheckFailure: ALL_OLD`, which the 409s rely on
    (docs/decisions/0041-a-409-that-tells-the-truth.md): each failed action that asked brings back its item as
    judged (none when there was no item), an action that did not ask brings back nothing, and a passing action
    says `None`. moto 5.2
    does this itself; this pins it, so an upgrade that stops cannot pass silently."""
    client, name = table
    client.put_item(TableName=name, Item={**_key("P", "head"), "headVersion": {"N": "8"}, "b": {"B": b"\x00x"}})
    client.put_item(TableName=name, Item={**_key("P", "quiet"), "n": {"N": "1"}})
    stale = {":base": {"N": "7"}}
    with pytest.raises(ClientError) as refused:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": name, "Item": {**_key("P", "passes"), "n": {"N": "1"}}}},
                {
                    "Update": {
                        "TableName": name,
                        "Key": _key("P", "head"),
                        "UpdateExpression": "SET headVersion = :base",
                        "ConditionExpression": "headVersion = :base",
                        "ExpressionAttributeValues": stale,
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": name,
                        "Key": _key("P", "absent"),
                        "ConditionExpression": "attribute_exists(pk)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": name,
                        "Key": _key("P", "quiet"),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    reasons = refused.value.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["None", *["ConditionalCheckFailed"] * 3]
    assert reasons[1]["Item"] == {**_key("P", "head"), "headVersion": {"N": "8"}, "b": {"B": b"\x00x"}}
    assert [("Item" in r) for r in reasons] == [False, True, False, False]
