"""A member's erasure's changes (`store/changes/erasure.py`) in DynamoDB's dialect, beside the rest
(`adapters/dynamo_changes.py`): the membership removed, attributes rewritten to the pseudonym, the batch's
counts, the receipt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workspace_memory.store import changes as ch
from workspace_memory.store import keys


def erasure_action(
    change: ch.RemoveMember | ch.RewriteAttributes | ch.CountErased | ch.CompleteErasure,
) -> dict[str, Any]:
    match change:
        case ch.CompleteErasure(item=item):
            return {
                "Put": {
                    "Item": item,
                    "ConditionExpression": "#status = :running",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {":running": "running"},
                }
            }
        case ch.RemoveMember(workspace_id=ws, user_id=user):
            return {
                "Delete": {
                    "Key": keys.as_key(keys.member(ws, user)),
                    "ConditionExpression": "attribute_exists(pk) AND #role <> :owner",
                    "ExpressionAttributeNames": {"#role": "role"},
                    "ExpressionAttributeValues": {":owner": "owner"},
                }
            }
        case ch.CountErased(workspace_id=ws, erasure_id=erasure, counts=counts):
            added = {f"#c{n}": name for n, name in enumerate(counts)}
            return {
                "Update": {
                    "Key": keys.as_key(keys.erasure(ws, erasure)),
                    "UpdateExpression": "SET "
                    + ", ".join(f"#c{n} = if_not_exists(#c{n}, :zero) + :c{n}" for n in range(len(counts))),
                    "ConditionExpression": "#status = :running",
                    "ExpressionAttributeNames": {**added, "#status": "status"},
                    "ExpressionAttributeValues": {
                        ":zero": 0,
                        ":running": "running",
                        **{f":c{n}": value for n, value in enumerate(counts.values())},
                    },
                }
            }
        case ch.RewriteAttributes(key=key, before=before, after=after):
            return _rewrite(key, before, after)


def _rewrite(key: keys.Key, before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """SET/REMOVE by name placeholders (an attribute's name may hold a `#`: `versions#{userId}`)."""
    names = {f"#b{n}": name for n, name in enumerate(before)} | {f"#a{n}": name for n, name in enumerate(after)}
    values = {f":b{n}": value for n, value in enumerate(before.values())}
    values |= {f":a{n}": value for n, value in enumerate(after.values()) if value is not None}
    sets = [f"#a{n} = :a{n}" for n, value in enumerate(after.values()) if value is not None]
    removes = [f"#a{n}" for n, value in enumerate(after.values()) if value is None]
    update = " ".join(
        part for part in (sets and "SET " + ", ".join(sets), removes and "REMOVE " + ", ".join(removes)) if part
    )
    body: dict[str, Any] = {
        "Key": keys.as_key(key),
        "UpdateExpression": update,
        "ConditionExpression": " AND ".join(["attribute_exists(pk)", *(f"#b{n} = :b{n}" for n in range(len(before)))]),
        "ExpressionAttributeNames": names,
    }
    if values:
        body["ExpressionAttributeValues"] = values
    return {"Update": body}
