"""The TransactWriteItems actions of an entry head's marks and of an agent write's window: the two entry
changes whose expressions are built from what they carry (`dynamo_changes.to_dynamo` dispatches here)."""

from __future__ import annotations

from typing import Any

from workspace_memory.store import changes as ch
from workspace_memory.store import keys

_ABSENT = "attribute_not_exists(pk)"


def mark_entry_head(change: ch.MarkEntryHead) -> dict[str, Any]:
    """Pin, unpin or verify the head iff it is at `base` and active; a person's verification drops an agent's
    evidence count, an agent's sets it."""
    assignments: list[str] = []
    removals: list[str] = []
    marks: dict[str, Any] = {":base": change.base, ":active": "active"}
    if change.pinned:
        assignments.append("pinned = :true")
        marks[":true"] = True
    elif change.pinned is False:
        removals.append("pinned")
    if change.verified is not None:
        assignments.append("verifiedAt = :at, verifiedBy = :by")
        marks |= {":at": change.verified[0], ":by": change.verified[1]}
        if change.evidence is None:
            removals.append("verifiedEvidence")
        else:
            assignments.append("verifiedEvidence = :evidence")
            marks[":evidence"] = change.evidence
    clauses = ["SET " + ", ".join(assignments)] if assignments else []
    clauses += ["REMOVE " + ", ".join(removals)] if removals else []
    return {
        "Update": {
            "Key": keys.as_key(change.key),
            "UpdateExpression": " ".join(clauses),
            "ConditionExpression": "revision = :base AND #status = :active",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": marks,
        }
    }


def agent_write(change: ch.CountAgentWrite) -> dict[str, Any]:
    """One more write in a key session's window: a new window, or one more id in the window's map iff it has
    room once the `trimmed` writes (each required present) are gone."""
    if change.opens:
        window = {change.write_id: change.at_ms}
        return {
            "Put": {
                "Item": {**keys.as_key(change.key), "window": window, "writes": 1, "ttl": change.ttl},
                "ConditionExpression": _ABSENT,
            }
        }
    trims = {f"#t{n}": write_id for n, write_id in enumerate(change.trimmed)}
    update = "SET #w.#id = :at, writes = writes + :one, #ttl = :ttl"
    condition = " AND ".join(["size(#w) < :room", *(f"attribute_exists(#w.{name})" for name in trims)])
    return {
        "Update": {
            "Key": keys.as_key(change.key),
            "UpdateExpression": update + (" REMOVE " + ", ".join(f"#w.{name}" for name in trims) if trims else ""),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {"#w": "window", "#id": change.write_id, "#ttl": "ttl", **trims},
            "ExpressionAttributeValues": {
                ":at": change.at_ms,
                ":one": 1,
                ":ttl": change.ttl,
                ":room": change.limit + len(trims),
            },
        }
    }
