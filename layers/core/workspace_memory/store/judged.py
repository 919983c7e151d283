"""Which changes bring back the item they were judged against when their condition fails.

These are the compare-and-sets whose refusal names a current value: the document head (`currentVersion`),
the policy (`current`), an entry head, a candidate or a notebook (`currentRevision`). Both table adapters
follow this one list (DynamoDB asks `ReturnValuesOnConditionCheckFailure: ALL_OLD` for exactly these), so
`TransactionCancelled.seen` means the same in memory and on DynamoDB.
"""

from __future__ import annotations

from workspace_memory.store import changes as ch
from workspace_memory.store import keys


def judged_key(change: ch.Change) -> keys.Key | None:
    """The key whose item a failure of `change` reports, or None for a change whose refusal names no value."""
    match change:
        case ch.MoveHead() | ch.MoveEntryHead() | ch.MarkEntryHead() | ch.ReplaceRevision() | ch.DeletePage():
            return change.key
        case ch.SetPolicyMode(workspace_id=ws):
            return keys.policy(ws)
    return None
