"""DynamoDB adapter: the table port over boto3's resource client (native Python types)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeDeserializer
from botocore.exceptions import BotoCoreError, ClientError

from workspace_memory.adapters.dynamo_changes import to_dynamo
from workspace_memory.kernel.errors import Unavailable
from workspace_memory.store.changes import Change
from workspace_memory.store.judged import judged_key
from workspace_memory.store.keys import Key
from workspace_memory.store.ports import Item, TransactionCancelled


def _native(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Binary):
        return bytes(value)  # type: ignore[call-overload]  # Binary implements __bytes__
    if isinstance(value, dict):
        return {k: _native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_native(v) for v in value]
    if isinstance(value, set):
        return {_native(v) for v in value}
    return value


def _wire(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


_TRANSIENT = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
}


BY_WORKSPACE_INDEX = "ByWorkspace"
"""The KEYS_ONLY index on `workspaceId` (template.yaml): how the purge finds a workspace's items outside its
own partition (conversations, admissions)."""

BY_MEMBER_INDEX = "ByMember"
"""The KEYS_ONLY index on `userId` and `sk` (template.yaml): a person's memberships, for their list of
workspaces."""


class DynamoTable:
    """Implements `ports.Table`. Every read is strongly consistent: decisions depend on them."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = client  # the low-level client of a boto3 DynamoDB *resource* (native types)
        self.name = table_name

    def _call(
        self, op: str, labels: Sequence[str] = (), judged: Sequence[Key | None] = (), **kwargs: Any
    ) -> dict[str, Any]:
        try:
            result: dict[str, Any] = getattr(self._client, op)(**kwargs)
            return result
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "TransactionCanceledException":
                details = exc.response.get("CancellationReasons", [])
                reasons = [r.get("Code", "None") for r in details]
                if not all(reason in ("None", "ConditionalCheckFailed") for reason in reasons):
                    # A conflict with another transaction or a throttle decides nothing: retry, don't report.
                    raise Unavailable(f"table {op} cancelled ({','.join(reasons)})", transient=True) from None
                failed = [label for label, reason in zip(labels, reasons, strict=False) if reason != "None"]
                raise TransactionCancelled(failed, _seen(judged, details)) from None
            raise Unavailable(f"table {op} failed ({code or 'error'})", transient=code in _TRANSIENT) from exc
        except BotoCoreError as exc:
            raise Unavailable(f"table {op} failed ({type(exc).__name__})", transient=True) from exc

    def get(self, pk: str, sk: str) -> Item | None:
        out = self._call("get_item", TableName=self.name, Key={"pk": pk, "sk": sk}, ConsistentRead=True)
        item = out.get("Item")
        return _native(item) if item is not None else None

    def get_many(self, keys: Sequence[tuple[str, str]]) -> list[Item | None]:
        if not keys:  # TransactGetItems refuses an empty list; nothing asked, nothing read
            return []
        out = self._call(
            "transact_get_items",
            TransactItems=[{"Get": {"TableName": self.name, "Key": {"pk": pk, "sk": sk}}} for pk, sk in keys],
        )
        return [_native(r["Item"]) if r.get("Item") else None for r in out.get("Responses", [])]

    def query(
        self,
        pk: str,
        sk_prefix: str,
        *,
        limit: int,
        newest_first: bool,
        start_after: str | None = None,
        attributes: Sequence[str] | None = None,
    ) -> list[Item]:
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            # An empty prefix is the whole partition (DynamoDB refuses an empty begins_with operand).
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)" if sk_prefix else "pk = :pk",
            "ExpressionAttributeValues": {":pk": pk, ":prefix": sk_prefix} if sk_prefix else {":pk": pk},
            "ScanIndexForward": not newest_first,
            "Limit": limit,
            "ConsistentRead": True,
        }
        if start_after is not None:
            kwargs["ExclusiveStartKey"] = {"pk": pk, "sk": start_after}
        if attributes is not None:
            names = {f"#a{n}": name for n, name in enumerate(dict.fromkeys(["pk", "sk", *attributes]))}
            kwargs["ProjectionExpression"] = ", ".join(names)
            kwargs["ExpressionAttributeNames"] = names
        out = self._call("query", **kwargs)
        return [_native(i) for i in out.get("Items", [])]

    def put(self, item: Item) -> None:
        self._call("put_item", TableName=self.name, Item=_wire(item))

    def member_keys(
        self, user_id: str, sk_prefix: str, *, limit: int, start_after: tuple[str, str] | None = None
    ) -> list[tuple[str, str]]:
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            "IndexName": BY_MEMBER_INDEX,
            "KeyConditionExpression": "userId = :user AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":user": user_id, ":prefix": sk_prefix},
            "Limit": limit,
        }
        if start_after is not None:
            kwargs["ExclusiveStartKey"] = {"userId": user_id, "pk": start_after[0], "sk": start_after[1]}
        out = self._call("query", **kwargs)
        return [(item["pk"], item["sk"]) for item in out.get("Items", [])]

    def workspace_keys(
        self, workspace_id: str, limit: int, start_after: tuple[str, str] | None = None
    ) -> list[tuple[str, str]]:
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            "IndexName": BY_WORKSPACE_INDEX,
            "KeyConditionExpression": "workspaceId = :ws",
            "ExpressionAttributeValues": {":ws": workspace_id},
            "Limit": limit,
        }
        if start_after is not None:
            kwargs["ExclusiveStartKey"] = {"workspaceId": workspace_id, "pk": start_after[0], "sk": start_after[1]}
        out = self._call("query", **kwargs)
        return [(item["pk"], item["sk"]) for item in out.get("Items", [])]

    def transact(self, changes: Sequence[Change]) -> None:
        items = []
        judged = [judged_key(change) for change in changes]
        for change, key in zip(changes, judged, strict=True):
            ((kind, body),) = to_dynamo(change).items()
            if key is not None:  # the item it was judged against comes back in its cancellation reason
                body = {**body, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
            items.append({kind: {"TableName": self.name, **_wire(body)}})
        labels = [change.label for change in changes]
        self._call("transact_write_items", labels=labels, judged=judged, TransactItems=items)


_DESERIALIZER = TypeDeserializer()


def _seen(judged: Sequence[Key | None], reasons: Sequence[Mapping[str, Any]]) -> dict[Key, Item | None]:
    """Each failed compare-and-set's item as the transaction judged it, from its cancellation reason (ALL_OLD):
    no `Item` means there was none. Errors are not transformed by the resource client: the item is wire form."""
    seen: dict[Key, Item | None] = {}
    for key, reason in zip(judged, reasons, strict=False):
        if key is not None and reason.get("Code") == "ConditionalCheckFailed":
            wire = reason.get("Item")
            seen[key] = None if not wire else _native({k: _DESERIALIZER.deserialize(v) for k, v in wire.items()})
    return seen
